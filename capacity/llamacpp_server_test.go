package capacity

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// tinyTokens is the tokenizer of the llama.cpp captures' tiny model, as
// the test servers below count: 10 tokens for every 11 characters (the
// captured /tokenize answer counts 38 characters as 35 tokens), so the
// reference's 3.0 characters per token gives prompts 2.7 times their
// plan.
func tinyTokens(s string) int { return len(s) - len(s)/11 }

// chatML is llama.cpp's fallback template (the captured /props
// chat_template) applied to one user message with the generation prompt.
func chatML(content string) string {
	return "<|im_start|>user\n" + content + "<|im_end|>\n<|im_start|>assistant\n"
}

// chatMLTokens counts a ChatML text as the tiny model does: each
// <|im_start|> and <|im_end|> is one token, the text between them is
// counted by tinyTokens; add_special adds the BOS.
func chatMLTokens(s string, bos bool) int {
	n := 0
	if bos {
		n++
	}
	for part := range strings.SplitSeq(strings.ReplaceAll(s, "<|im_end|>", "<|im_start|>"), "<|im_start|>") {
		n += tinyTokens(part)
	}
	return n + strings.Count(s, "<|im_start|>") + strings.Count(s, "<|im_end|>")
}

// llamaCppServer answers as the captured llama-server b10573 does: its
// /v1/models, /props, /tokenize (content only; the chat form answers the
// captured empty list), /apply-template, and chat completions that
// stream the captured usage stream with the prompt counted by
// chatMLTokens (BOS included), or refuse a prompt at or above the window
// with the captured exceed_context_size_error body, counts substituted.
// noTokenize removes /tokenize and /apply-template (404), so sizing must
// calibrate.
type llamaCppServer struct {
	t          testing.TB
	window     int // n_ctx of a slot; the captures' 8192
	noTokenize bool

	models, props, emptyTokens, overWindow, stream []byte

	chats, refused, calibrations atomic.Int32
	mu                           sync.Mutex
	largestBody                  int
}

func newLlamaCppServer(t testing.TB) *llamaCppServer {
	return &llamaCppServer{
		t: t, window: 8192,
		models:      wiretest.ReadTranscript(t, "llamacpp-b10573-models.json"),
		props:       wiretest.ReadTranscript(t, "llamacpp-b10573-props.json"),
		emptyTokens: wiretest.ReadTranscript(t, "llamacpp-b10573-tokenize-messages.json"),
		overWindow:  wiretest.ReadTranscript(t, "llamacpp-b10573-stream-over-window.json"),
		stream:      wiretest.ReadTranscript(t, "llamacpp-b10573-stream-usage.sse"),
	}
}

var (
	capturedPromptTokens = regexp.MustCompile(`"prompt_tokens":\d+`)
	capturedTotalTokens  = regexp.MustCompile(`"total_tokens":\d+`)
)

func (s *llamaCppServer) handler() http.Handler {
	mux := http.NewServeMux()
	jsonAnswer := func(body []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			_, _ = w.Write(body)
		}
	}
	mux.HandleFunc("GET /v1/models", jsonAnswer(s.models))
	mux.HandleFunc("GET /props", jsonAnswer(s.props))
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	if !s.noTokenize {
		mux.HandleFunc("POST /tokenize", s.tokenize)
		mux.HandleFunc("POST /apply-template", s.applyTemplate)
	}
	return mux
}

type llamaCppBody struct {
	MaxTokens  int     `json:"max_tokens"`
	Content    *string `json:"content"`
	AddSpecial bool    `json:"add_special"`
	Messages   []struct {
		Content string `json:"content"`
	} `json:"messages"`
}

func (s *llamaCppServer) decode(w http.ResponseWriter, r *http.Request) (llamaCppBody, bool) {
	var buf bytes.Buffer
	_, err := buf.ReadFrom(r.Body)
	require.NoError(s.t, err)
	s.mu.Lock()
	s.largestBody = max(s.largestBody, buf.Len())
	s.mu.Unlock()
	var b llamaCppBody
	if err := json.Unmarshal(buf.Bytes(), &b); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return b, false
	}
	return b, true
}

func (s *llamaCppServer) tokenize(w http.ResponseWriter, r *http.Request) {
	b, ok := s.decode(w, r)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if b.Content == nil {
		_, _ = w.Write(s.emptyTokens) // llama.cpp reads only content
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"tokens": make([]int, chatMLTokens(*b.Content, b.AddSpecial))})
}

func (s *llamaCppServer) applyTemplate(w http.ResponseWriter, r *http.Request) {
	b, ok := s.decode(w, r)
	if !ok {
		return
	}
	require.Len(s.t, b.Messages, 1)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(map[string]string{"prompt": chatML(b.Messages[0].Content)})
}

func (s *llamaCppServer) chat(w http.ResponseWriter, r *http.Request) {
	b, ok := s.decode(w, r)
	if !ok {
		return
	}
	require.Len(s.t, b.Messages, 1)
	s.chats.Add(1)
	if b.MaxTokens == 1 {
		s.calibrations.Add(1)
	}
	n := chatMLTokens(chatML(b.Messages[0].Content), true)
	if n >= s.window {
		s.refused.Add(1)
		body := strings.NewReplacer(`44722`, fmt.Sprint(n), `8192`, fmt.Sprint(s.window)).Replace(string(s.overWindow))
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(body))
		return
	}
	body := capturedPromptTokens.ReplaceAll(s.stream, fmt.Appendf(nil, `"prompt_tokens":%d`, n))
	body = capturedTotalTokens.ReplaceAll(body, fmt.Appendf(nil, `"total_tokens":%d`, n+8))
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = w.Write(body)
}

// TestLlamaCppServerMatchesCaptures: the test server's tokenizer counts the
// captured /tokenize text as the real server did within a token, and its
// refusal is the captured one for the captured over-window prompt.
func TestLlamaCppServerMatchesCaptures(t *testing.T) {
	var tok struct {
		Tokens []int `json:"tokens"`
	}
	require.NoError(t, json.Unmarshal(wiretest.ReadTranscript(t, "llamacpp-b10573-tokenize.json"), &tok))
	require.InDelta(t, len(tok.Tokens), tinyTokens("def helper_0(x): return compute(x, 0);"), 1)

	var over strings.Builder
	for i := 0; over.Len() < 49152; i++ {
		fmt.Fprintf(&over, "def helper_%d(x): return compute(x, %d); ", i, i*7)
	}
	counted := chatMLTokens(chatML(over.String()[:49152]), true)
	require.InEpsilon(t, 44722, counted, 0.01, "the captured refusal counted 44722 tokens")
	var refusal struct {
		Error struct {
			NPromptTokens int `json:"n_prompt_tokens"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(wiretest.ReadTranscript(t, "llamacpp-b10573-stream-over-window.json"), &refusal))
	require.Equal(t, 44722, refusal.Error.NPromptTokens)
}

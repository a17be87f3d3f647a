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

	"github.com/anvilbench/anvil/fake_server/tinyllama"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// tinyTokens counts text as the tiny model of the llama.cpp captures
// does, as a chat message's content (without BOS and the opening "▁" the
// template's newline before it takes): package tinyllama, about 10 tokens
// for every 11 characters, so the reference's 3.0 characters per token
// gives prompts 2.7 times their plan.
func tinyTokens(s string) int { return len(tinyllama.Tokenize(s)) - 1 }

// llamaCppServer answers as the captured llama-server b10573 does: its
// /v1/models, /props, /tokenize (content only; the chat form answers the
// captured empty list), /apply-template, and chat completions that
// stream the captured usage stream with the prompt counted as the real
// server counts it (tinyllama.ChatTokens: BOS, ChatML, 52 tokens of
// template for one user message), or refuse a prompt at or above the
// window with the captured exceed_context_size_error body, counts
// substituted.
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
	MaxTokens  int                 `json:"max_tokens"`
	Content    *string             `json:"content"`
	AddSpecial bool                `json:"add_special"`
	Messages   []tinyllama.Message `json:"messages"`
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
	ids := tinyllama.Tokenize(*b.Content)
	if b.AddSpecial {
		ids = append([]int{tinyllama.BOS}, ids...)
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"tokens": ids})
}

func (s *llamaCppServer) applyTemplate(w http.ResponseWriter, r *http.Request) {
	b, ok := s.decode(w, r)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(map[string]string{"prompt": tinyllama.Template(b.Messages)})
}

func (s *llamaCppServer) chat(w http.ResponseWriter, r *http.Request) {
	b, ok := s.decode(w, r)
	if !ok {
		return
	}
	s.chats.Add(1)
	if b.MaxTokens == 1 {
		s.calibrations.Add(1)
	}
	n := tinyllama.ChatTokens(b.Messages)
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

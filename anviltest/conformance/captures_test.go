package conformance

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
)

// The servers of this file answer with the real bytes of llama.cpp b10573
// and ollama 0.17.4 (testdata/llamacpp, testdata/ollama; provenance in
// testdata/README.md). They rewrite only what depends on the request: the
// token counts of usage (from the tokenizer below), how many of the
// captured content chunks a max_tokens lets through, and, for llama.cpp,
// the counts of its over-window refusal and the cached tokens of a repeated
// prefix (its prompt cache). Everything else is served as captured.

// readCapture reads a file of testdata/.
func readCapture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

// capturedEvents splits a captured stream into the data of its events.
func capturedEvents(t *testing.T, name string) []string {
	t.Helper()
	var data []string
	for _, ev := range strings.Split(strings.TrimSpace(string(readCapture(t, name))), "\n\n") {
		d, ok := strings.CutPrefix(ev, "data: ")
		require.True(t, ok, "%s: an event that is not one data line: %q", name, ev)
		data = append(data, d)
	}
	return data
}

// tinyTokens counts text as the captured tiny model's tokenizer does on
// average: the captured POST /tokenize counts 35 tokens for the 38 bytes
// "def helper_0(x): return compute(x, 0);" (about 1.1 characters per token,
// far from the 3 a client may assume).
func tinyTokens(s string) int { return (len(s)*35 + 37) / 38 }

// chatML is the ChatML prompt llama.cpp's fallback template (props.json's
// chat_template) makes of messages, with the generation prompt.
func chatML(messages []chatMessage) string {
	var b strings.Builder
	for _, m := range messages {
		b.WriteString("<|im_start|>" + m.Role + "\n" + m.Content + "<|im_end|>\n")
	}
	b.WriteString("<|im_start|>assistant\n")
	return b.String()
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// chatRequest is what the servers read of a chat request; bad says why it
// is refused: "json" (not JSON) or "messages" (not an array of messages).
type chatRequest struct {
	model     string
	messages  []chatMessage
	maxTokens int // max_tokens or max_completion_tokens, 0 when neither
	bad       string
}

func parseChat(r *http.Request) chatRequest {
	var q struct {
		Model     string          `json:"model"`
		Messages  json.RawMessage `json:"messages"`
		MaxTokens *int            `json:"max_tokens"`
		MaxCompl  *int            `json:"max_completion_tokens"`
	}
	body, _ := io.ReadAll(r.Body)
	if json.Unmarshal(body, &q) != nil {
		return chatRequest{bad: "json"}
	}
	c := chatRequest{model: q.Model}
	if json.Unmarshal(q.Messages, &c.messages) != nil || len(c.messages) == 0 {
		return chatRequest{bad: "messages"}
	}
	for _, n := range []*int{q.MaxTokens, q.MaxCompl} {
		if n != nil {
			c.maxTokens = *n
		}
	}
	return c
}

// writeJSON answers status with a captured JSON body.
func writeJSON(w http.ResponseWriter, status int, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeStream sends events as a text/event-stream.
func writeStream(w http.ResponseWriter, events []string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, ev := range events {
		fmt.Fprintf(w, "data: %s\n\n", ev)
	}
}

// replaceOnce replaces old by new in s, which must hold it.
func replaceOnce(t *testing.T, s, old, new string) string {
	t.Helper()
	require.Contains(t, s, old)
	return strings.Replace(s, old, new, 1)
}

// llamaCpp is llama-server b10573 serving tiny.gguf from the captures.
type llamaCpp struct {
	models, props, tokenizeMessages, tokenizeContent, overWindow, badBody, badMessages []byte
	nCtx                                                                               int
	// role, content, finish, usage, done: the events of stream-usage.sse.
	role, finish, usage, done string
	content                   []string

	mu         sync.Mutex
	lastPrompt string // the prompt cache of the one slot the tests use
}

// llamaCppCaptured is the server of the capture at --ctx-size 32768
// --parallel 4 (models.json, props.json: 8192 tokens a slot), or of the
// one at --ctx-size 8192 --parallel 4 (2048 a slot) when parallel4.
func llamaCppCaptured(t *testing.T, parallel4 bool) *llamaCpp {
	t.Helper()
	suffix, nCtx := "", 8192
	if parallel4 {
		suffix, nCtx = "-ctx8192-parallel4", 2048
	}
	l := &llamaCpp{
		models:           readCapture(t, "llamacpp/models"+suffix+".json"),
		props:            readCapture(t, "llamacpp/props"+suffix+".json"),
		tokenizeMessages: readCapture(t, "llamacpp/tokenize-messages.json"),
		tokenizeContent:  readCapture(t, "llamacpp/tokenize.json"),
		overWindow:       readCapture(t, "llamacpp/stream-over-window.json"),
		badBody:          readCapture(t, "llamacpp/bad-body.json"),
		badMessages:      readCapture(t, "llamacpp/bad-messages.json"),
		nCtx:             nCtx,
	}
	ev := capturedEvents(t, "llamacpp/stream-usage.sse")
	require.Len(t, ev, 12, "role, 8 content chunks, finish, usage, [DONE]")
	l.role, l.content, l.finish, l.usage, l.done = ev[0], ev[1:9], ev[9], ev[10], ev[11]
	// The templates of what the request changes.
	l.usage = replaceOnce(t, l.usage, `"usage":{"completion_tokens":8,"prompt_tokens":71,"total_tokens":79,"prompt_tokens_details":{"cached_tokens":0}}`,
		`"usage":{"completion_tokens":%[1]d,"prompt_tokens":%[2]d,"total_tokens":%[3]d,"prompt_tokens_details":{"cached_tokens":%[4]d}}`)
	ow := replaceOnce(t, string(l.overWindow), `"n_prompt_tokens":44722,"n_ctx":8192`, `"n_prompt_tokens":%[1]d,"n_ctx":%[2]d`)
	l.overWindow = []byte(replaceOnce(t, ow, "request (44722 tokens) exceeds the available context size (8192 tokens)", "request (%[1]d tokens) exceeds the available context size (%[2]d tokens)"))
	return l
}

// llamaCppJSON is the Content-Type of llama-server's JSON answers.
const llamaCppJSON = "application/json; charset=utf-8"

func (l *llamaCpp) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method + " " + r.URL.Path {
	case "GET /v1/models", "GET /models":
		writeJSON(w, http.StatusOK, llamaCppJSON, l.models)
	case "GET /props":
		writeJSON(w, http.StatusOK, llamaCppJSON, l.props)
	case "POST /tokenize":
		l.tokenize(w, r)
	case "POST /apply-template":
		// Not captured: the answer's shape is that of llama.cpp's
		// tools/server (handle_apply_template: {"prompt": ...}).
		c := parseChat(r)
		b, _ := json.Marshal(map[string]string{"prompt": chatML(c.messages)})
		writeJSON(w, http.StatusOK, llamaCppJSON, b)
	case "POST /v1/chat/completions":
		l.chat(w, r)
	default:
		writeJSON(w, http.StatusNotFound, llamaCppJSON, []byte(`{"error":{"code":404,"message":"File Not Found","type":"not_found_error"}}`))
	}
}

// tokenize answers POST /tokenize: the captured {"tokens":[]} for a body
// without content (the messages form), the captured ids for the captured
// content, else as many ids as tinyTokens counts (one more for the BOS
// token with add_special).
func (l *llamaCpp) tokenize(w http.ResponseWriter, r *http.Request) {
	var q struct {
		Content    *string `json:"content"`
		AddSpecial bool    `json:"add_special"`
	}
	_ = json.NewDecoder(r.Body).Decode(&q)
	switch {
	case q.Content == nil:
		writeJSON(w, http.StatusOK, llamaCppJSON, l.tokenizeMessages)
	case *q.Content == "def helper_0(x): return compute(x, 0);" && !q.AddSpecial:
		writeJSON(w, http.StatusOK, llamaCppJSON, l.tokenizeContent)
	default:
		n := tinyTokens(*q.Content)
		if q.AddSpecial {
			n++
		}
		ids := make([]int, n)
		for i := range ids {
			ids[i] = 259 + i%161
		}
		b, _ := json.Marshal(map[string][]int{"tokens": ids})
		writeJSON(w, http.StatusOK, llamaCppJSON, b)
	}
}

// chat answers a chat completion as llama-server does: HTTP 500 for a body
// that is not JSON, 400 for messages that are not an array, 400
// exceed_context_size_error over the slot's window, else the captured
// stream (whatever the model asked for: it serves its one model).
func (l *llamaCpp) chat(w http.ResponseWriter, r *http.Request) {
	c := parseChat(r)
	switch c.bad {
	case "json":
		writeJSON(w, http.StatusInternalServerError, llamaCppJSON, l.badBody)
		return
	case "messages":
		writeJSON(w, http.StatusBadRequest, llamaCppJSON, l.badMessages)
		return
	}
	prompt := chatML(c.messages)
	tokens := tinyTokens(prompt) + 1 // the BOS token
	if tokens > l.nCtx {
		writeJSON(w, http.StatusBadRequest, llamaCppJSON, fmt.Appendf(nil, string(l.overWindow), tokens, l.nCtx))
		return
	}
	l.mu.Lock()
	cached := 0
	if common := commonPrefix(l.lastPrompt, prompt); common != "" {
		cached = min(tinyTokens(common), tokens-1)
	}
	l.lastPrompt = prompt
	l.mu.Unlock()
	n := len(l.content)
	if c.maxTokens > 0 {
		n = min(n, c.maxTokens)
	}
	events := append([]string{l.role}, l.content[:n]...)
	events = append(events, l.finish, fmt.Sprintf(l.usage, n, tokens, tokens+n, cached), l.done)
	writeStream(w, events)
}

func commonPrefix(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return a[:i]
}

// ollama is ollama 0.17.4 serving tiny:latest (a 4,096-token window) from
// the captures.
type ollama struct {
	models, ps, show, unknownModel, badBody []byte
	truncated                               []string // stream-long-prompt-truncated.sse
	content                                 []string
	finish, usage, done                     string
}

// ollamaWindow is the window of the captured ollama: api-ps.json's
// context_length.
const ollamaWindow = 4096

func ollamaCaptured(t *testing.T) *ollama {
	t.Helper()
	o := &ollama{
		models:       readCapture(t, "ollama/models.json"),
		ps:           readCapture(t, "ollama/api-ps.json"),
		show:         readCapture(t, "ollama/api-show.json"),
		unknownModel: readCapture(t, "ollama/unknown-model.json"),
		badBody:      readCapture(t, "ollama/bad-body.json"),
		truncated:    capturedEvents(t, "ollama/stream-long-prompt-truncated.sse"),
	}
	ev := capturedEvents(t, "ollama/stream-usage.sse")
	require.Len(t, ev, 15, "12 content chunks, finish, usage, [DONE]")
	o.content, o.finish, o.usage, o.done = ev[:12], ev[12], ev[13], ev[14]
	o.usage = replaceOnce(t, o.usage, `"usage":{"prompt_tokens":100,"completion_tokens":24,"total_tokens":124}`,
		`"usage":{"prompt_tokens":%[1]d,"completion_tokens":%[2]d,"total_tokens":%[3]d}`)
	return o
}

func (o *ollama) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method + " " + r.URL.Path {
	case "GET /v1/models":
		writeJSON(w, http.StatusOK, "application/json", o.models)
	case "GET /api/ps":
		writeJSON(w, http.StatusOK, "application/json; charset=utf-8", o.ps)
	case "POST /api/show":
		writeJSON(w, http.StatusOK, "application/json; charset=utf-8", o.show)
	case "POST /v1/chat/completions":
		o.chat(w, r)
	default:
		// ollama's router (gin) answers an unknown route so.
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, "404 page not found")
	}
}

// chat answers a chat completion as ollama does: 400 for a body it cannot
// read (the captured answer is for messages that are not an array; a body
// that is not JSON gets the same kind), 404 for a model it does not have,
// the captured truncated stream (usage.prompt_tokens 4096) for a prompt
// over its window, else the captured stream.
func (o *ollama) chat(w http.ResponseWriter, r *http.Request) {
	c := parseChat(r)
	switch {
	case c.bad != "":
		writeJSON(w, http.StatusBadRequest, "application/json; charset=utf-8", o.badBody)
		return
	case c.model != "tiny:latest" && c.model != "tiny":
		writeJSON(w, http.StatusNotFound, "application/json", o.unknownModel)
		return
	}
	tokens := tinyTokens(chatML(c.messages)) + 1
	if tokens > ollamaWindow {
		writeStream(w, o.truncated)
		return
	}
	n := len(o.content)
	if c.maxTokens > 0 {
		n = min(n, c.maxTokens)
	}
	events := append(append([]string(nil), o.content[:n]...), o.finish, fmt.Sprintf(o.usage, tokens, n, tokens+n), o.done)
	writeStream(w, events)
}

// TestLlamaCppCaptured: against llama.cpp's captured answers the suite
// passes models (meta.n_ctx in /v1/models) and prompt_tokens (the
// messages form of /tokenize answers {"tokens": []}, which is no count;
// /apply-template then /tokenize with add_special agrees with usage, and
// the over-window prompt is refused with exceed_context_size_error), and
// fails bad_request for what llama.cpp really does: HTTP 500 for invalid
// JSON, a stream for an unknown model.
func TestLlamaCppCaptured(t *testing.T) {
	for _, tc := range []struct {
		name      string
		parallel4 bool
		window    string
	}{
		{"ctx-size 32768 parallel 4", false, "context window 8192 advertised by /models meta.n_ctx"},
		{"ctx-size 8192 parallel 4", true, "context window 2048 advertised by /models meta.n_ctx"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(llamaCppCaptured(t, tc.parallel4))
			defer srv.Close()
			got := suiteAt(t, Config{Target: capacity.Target{BaseURL: srv.URL + "/v1"}})
			checkVerdicts(t, got, map[string]Outcome{
				nameModels: Pass, nameStreamFraming: Pass, nameUsage: Pass, nameMaxTokens: Pass, nameFinishReason: Pass,
				nameContent: Pass, nameReasoningSeparation: Skip, namePromptTokens: Pass, namePrefixCache: Pass,
				nameBadRequest: Fail, nameIsolation: Skip, nameDeterminism: Pass, nameMetrics: Skip,
			})
			require.Equal(t, `lists "tiny.gguf", `+tc.window, got[nameModels].Reason)
			notes := strings.Join(got[namePromptTokens].Notes, "\n")
			require.Contains(t, notes, "POST /apply-template then POST /tokenize (content, add_special) agrees")
			require.Contains(t, notes, "/tokenize: a count of 0 for a non-empty prompt is no count")
			require.Contains(t, notes, "refused: HTTP 400")
			require.Contains(t, notes, "exceed_context_size_error")
			bad := got[nameBadRequest].Reason
			require.Contains(t, bad, "invalid JSON: HTTP 500, want a 4xx")
			require.Contains(t, bad, "unknown model: HTTP 200, want a 4xx, answered with a stream")
			require.NotContains(t, bad, "malformed messages", "llama.cpp refuses malformed messages rightly")
		})
	}
}

// TestOllamaCaptured: against ollama's captured answers, without a
// declared window, the suite finds the window in /api/ps as capacity.Run
// does: models passes, and prompt_tokens fails for the truncation ollama
// really does (a prompt over the window accepted, usage.prompt_tokens
// 4096), not a SKIP for want of a window.
func TestOllamaCaptured(t *testing.T) {
	srv := httptest.NewServer(ollamaCaptured(t))
	defer srv.Close()
	got := suiteAt(t, Config{Target: capacity.Target{BaseURL: srv.URL + "/v1"}})
	checkVerdicts(t, got, map[string]Outcome{
		nameModels: Pass, nameStreamFraming: Pass, nameUsage: Pass, nameMaxTokens: Pass, nameFinishReason: Pass,
		nameContent: Pass, nameReasoningSeparation: Skip, namePromptTokens: Fail, namePrefixCache: Skip,
		nameBadRequest: Pass, nameIsolation: Skip, nameDeterminism: Pass, nameMetrics: Skip,
	})
	require.Equal(t, `lists "tiny:latest", context window 4096 advertised by /api/ps`, got[nameModels].Reason)
	require.Contains(t, got[namePromptTokens].Reason, "for a window of 4096 was accepted (usage.prompt_tokens 4096): silently truncated")
	require.Contains(t, got[nameModels].Notes, `capacity.Discover: model "tiny:latest" from /models, GET /models lists ["tiny:latest"]`, "the discovery says what it found")
	require.Contains(t, got[nameModels].Notes, "GET /props: HTTP 404 Not Found", "the discovery says what it tried")
	require.Contains(t, got[nameModels].Notes, "GET /api/ps: answered, window 4096")
}

// TestWindowDeclaredDisagrees: a declared window that disagrees with the
// one the server serves (ollama's /api/ps, llama.cpp's /v1/models) is
// named, and the served one is used, so the over-long prompt is sized on
// the window the server truncates or refuses at; against a trained window
// only (/api/show) the smaller of the two is used. The discovery is
// capacity.Discover's, through the suite's client.
func TestWindowDeclaredDisagrees(t *testing.T) {
	noPS := ollamaCaptured(t)
	noPS.ps = []byte(`{"models":[]}`) // the model is not loaded
	for _, tc := range []struct {
		name       string
		srv        http.Handler
		declared   int
		window     int
		from       string
		advertised string // advertisedFrom of the Discovery
		note       string // a part of Discovery.Note ("" for none)
	}{
		{"ollama, declared above", ollamaCaptured(t), 16384, 4096, "/api/ps", "/api/ps",
			"Target.MaxModelLen 16384 is above the window of 4096 tokens the server advertises (/api/ps)"},
		{"llama.cpp, declared below", llamaCppCaptured(t, false), 2048, 8192, "/models meta.n_ctx", "/models meta.n_ctx",
			"Target.MaxModelLen 2048 is below the window of 8192 tokens the server advertises (/models)"},
		{"ollama not loaded, declared above", noPS, 16384, 4096, "/api/show", "/api/show",
			"Target.MaxModelLen 16384 is above the window of 4096 tokens the server advertises (/api/show)"},
		{"ollama not loaded, declared below", noPS, 2048, 2048, "Target.MaxModelLen", "/api/show", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.srv)
			defer srv.Close()
			s, err := New(t.Context(), Config{Target: capacity.Target{BaseURL: srv.URL + "/v1", MaxModelLen: tc.declared}})
			require.NoError(t, err)
			require.NoError(t, s.p.discErr)
			n, from := s.p.window()
			require.Equal(t, tc.window, n)
			require.Equal(t, tc.from, from)
			require.Equal(t, tc.declared, s.p.disc.Window, "the declared window is the planned one")
			require.Equal(t, tc.advertised, advertisedFrom(s.p.disc))
			if tc.note == "" {
				require.Empty(t, s.p.disc.Note)
			} else {
				require.Contains(t, s.p.disc.Note, tc.note)
			}
		})
	}
}

// TestDiscoveryFailed: when GET /models gives no model list the models
// check fails with capacity.Discover's reason, and the suite goes on
// (with Target.Model and Target.MaxModelLen set, the discovery itself is
// no error); when the server advertises no window at all, the model list
// is still judged and models SKIPs.
func TestDiscoveryFailed(t *testing.T) {
	noModels := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			http.Error(w, "no such route", http.StatusNotFound)
			return
		}
		ollamaCaptured(t).ServeHTTP(w, r)
	})
	srv := httptest.NewServer(noModels)
	defer srv.Close()
	s, err := New(t.Context(), Config{Target: capacity.Target{BaseURL: srv.URL + "/v1", Model: "tiny:latest", MaxModelLen: 4096}})
	require.NoError(t, err)
	require.NoError(t, s.p.discErr)
	v := s.Check(t.Context(), nameModels)
	require.Equal(t, Fail, v.Outcome, "%s", v.Reason)
	require.Contains(t, v.Reason, "GET /models failed: capacity: the endpoint refused the requests: model probe GET "+srv.URL+"/v1/models: HTTP 404 Not Found")
	n, from := s.p.window()
	require.Equal(t, 4096, n)
	require.Equal(t, "/api/ps", from, "the native endpoints are still asked")

	bare := ollamaCaptured(t)
	bare.ps, bare.show = []byte(`{"models":[]}`), []byte(`{"model_info":{}}`)
	srv2 := httptest.NewServer(bare)
	defer srv2.Close()
	s, err = New(t.Context(), Config{Target: capacity.Target{BaseURL: srv2.URL + "/v1"}})
	require.NoError(t, err)
	require.ErrorIs(t, s.p.discErr, capacity.ErrInvalidConfig)
	require.Equal(t, "tiny:latest", s.p.model, "the model of the list, though no window was found")
	v = s.Check(t.Context(), nameModels)
	require.Equal(t, Skip, v.Outcome, "%s", v.Reason)
	require.Equal(t, `the server advertises no context window for "tiny:latest" (none of max_model_len, max_context_length, context_length, meta.n_ctx in its /models entry, no /props, /api/ps or /api/show answer with one)`, v.Reason)
}

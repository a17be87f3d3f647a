package traffic_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/internal/pipenet"
)

// seen is one chat request as the server received it.
type seen struct {
	at       time.Duration // since the server started, on the bubble's clock
	messages []message
	body     map[string]json.RawMessage
}

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// chatServer is a plain HTTP server on the in-memory network of package
// pipenet. Every chat request is recorded, then answered after delay with
// the content answer(n) for the n-th request (0-based), usage with
// prompt_tokens at 3 characters per token and, as cached tokens, the
// tokens of every message but the last; fail(messages) true answers
// HTTP 500 instead.
type chatServer struct {
	*pipenet.Server
	delay time.Duration
	fail  func(messages []message) bool
	start time.Time

	// tokens counts a message's tokens; nil is 3 characters per token.
	tokens func(content string) int
	// tokenize serves vLLM's POST /tokenize ({"count"}) with tokens.
	tokenize bool

	mu   sync.Mutex
	seen []seen
}

func (s *chatServer) count(content string) int {
	if s.tokens == nil {
		return len(content) / 3
	}
	return s.tokens(content)
}

// countTokens answers POST /tokenize: the count of the body's messages or
// prompt.
func (s *chatServer) countTokens(w http.ResponseWriter, raw []byte) {
	var body struct {
		Prompt   string    `json:"prompt"`
		Messages []message `json:"messages"`
	}
	if json.Unmarshal(raw, &body) != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	n := s.count(body.Prompt)
	for _, m := range body.Messages {
		n += s.count(m.Content)
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprintf(w, `{"count":%d}`, n)
}

func answer(n int) string { return fmt.Sprintf("answer number %d, in a few words", n) }

func newChatServer(t *testing.T, delay time.Duration) *chatServer {
	s := &chatServer{delay: delay, start: time.Now()}
	s.Server = pipenet.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *chatServer) target() capacity.Target {
	return capacity.Target{BaseURL: s.URL + "/v1", Model: "m", MaxModelLen: 1 << 20, HTTPClient: s.Client()}
}

func (s *chatServer) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	if s.tokenize && r.URL.Path == "/tokenize" {
		s.countTokens(w, raw)
		return
	}
	if r.URL.Path != "/v1/chat/completions" {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
		return
	}
	var body map[string]json.RawMessage
	var msgs []message
	if json.Unmarshal(raw, &body) != nil || json.Unmarshal(body["messages"], &msgs) != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	n := len(s.seen)
	s.seen = append(s.seen, seen{at: time.Since(s.start), messages: msgs, body: body})
	s.mu.Unlock()
	time.Sleep(s.delay)
	if s.fail != nil && s.fail(msgs) {
		http.Error(w, "injected failure", http.StatusInternalServerError)
		return
	}
	prompt, cached := 0, 0
	for k, m := range msgs {
		prompt += s.count(m.Content)
		if k < len(msgs)-1 {
			cached += s.count(m.Content)
		}
	}
	content, _ := json.Marshal(answer(n))
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%s}}]}\n\n"+
		"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"+
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":6,\"total_tokens\":%d,\"prompt_tokens_details\":{\"cached_tokens\":%d}}}\n\n"+
		"data: [DONE]\n\n", content, prompt, prompt+6, cached)
}

func (s *chatServer) requests() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seen(nil), s.seen...)
}

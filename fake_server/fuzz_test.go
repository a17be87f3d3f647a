package fakeserver

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"unicode/utf8"
)

// FuzzChatRequest: any request body gets a well-formed answer: 200 with a
// complete stream (JSON events, then [DONE]) or a JSON completion, or a 4xx
// with an OpenAI-style error; never a 5xx or a panic.
func FuzzChatRequest(f *testing.F) {
	f.Add(`{"messages":[{"role":"user","content":"hi"}],"stream":true,"max_tokens":4}`)
	f.Add(`{"messages":[{"role":"user","content":[{"type":"text","text":"exactly 3 code"}]}],"max_completion_tokens":2}`)
	f.Add(`{"model":"x","messages":[]}`)
	f.Add(`{"messages":[{"role":"user","content":null}],"chat_template_kwargs":{"enable_thinking":false}}`)
	f.Add(`[`)
	f.Fuzz(func(t *testing.T, body string) {
		synctest.Test(t, func(t *testing.T) {
			cfg := Fast()
			cfg.MaxModelLen = 512
			srv := NewInMemory(cfg)
			defer srv.Close()
			resp, err := srv.Client().Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatalf("post: %v", err)
			}
			defer resp.Body.Close()
			data, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			switch {
			case resp.StatusCode == http.StatusOK && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"):
				// A complete stream: every event is a JSON chunk, then [DONE].
				events := sseData(data)
				if len(events) == 0 || events[len(events)-1] != "[DONE]" {
					t.Fatalf("stream does not end with [DONE]: %q", data)
				}
				for _, ev := range events[:len(events)-1] {
					if !json.Valid([]byte(ev)) {
						t.Fatalf("invalid JSON event %q", ev)
					}
				}
			case resp.StatusCode == http.StatusOK:
				var c struct {
					Choices []json.RawMessage `json:"choices"`
				}
				if err := json.Unmarshal(data, &c); err != nil || len(c.Choices) != 1 {
					t.Fatalf("non-streamed body %q: want one choice (%v)", data, err)
				}
			case resp.StatusCode >= 400 && resp.StatusCode < 500:
				if !strings.HasPrefix(string(data), `{"error":{"message":`) {
					t.Fatalf("status %d body %q", resp.StatusCode, data)
				}
			default:
				t.Fatalf("status %d for body %q", resp.StatusCode, body)
			}
		})
	})
}

// FuzzWordsTokenizer: the words tokenizer counts at least one token for a
// non-empty text and at most one per character, and cutting a text in two
// never counts fewer tokens than the whole (a cut can only split a run).
func FuzzWordsTokenizer(f *testing.F) {
	f.Add("def helper_12():\n    return compute(12)  # routine specialist context\n", 7)
	f.Add("e\u0301te 日本語", 2)
	f.Add("", 0)
	f.Add("a\xffb\xc3", 1)
	cfg := Fast()
	cfg.Tokenizer = tokenizerWords
	f.Fuzz(func(t *testing.T, text string, cut int) {
		n := cfg.CountTokens(text)
		if runes := utf8.RuneCountInString(text); n > runes || (runes > 0 && n == 0) {
			t.Fatalf("%q: %d tokens for %d characters", text, n, runes)
		}
		if cut < 0 || cut > len(text) {
			return
		}
		if a, b := cfg.CountTokens(text[:cut]), cfg.CountTokens(text[cut:]); a+b < n {
			t.Fatalf("%q cut at %d: %d + %d tokens < %d", text, cut, a, b, n)
		}
	})
}

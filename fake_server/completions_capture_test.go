package fakeserver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// completionsChunk is what the pinning tests read of a text_completion.
type completionsChunk struct {
	ID                string `json:"id"`
	Created           int64  `json:"created"`
	Model             string `json:"model"`
	SystemFingerprint string `json:"system_fingerprint"`
	Choices           []struct {
		Text string `json:"text"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		PromptTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Timings json.RawMessage `json:"timings"`
}

// completionsValues feeds a completions framer a capture's values.
func completionsValues(t *testing.T, cfg *Config, chunks []completionsChunk) (id string, created int64, prompt, cached int, timings json.RawMessage, gs []group) {
	t.Helper()
	for _, c := range chunks {
		id, created, cfg.Model, cfg.Dialect.SystemFingerprint = c.ID, c.Created, c.Model, c.SystemFingerprint
		for _, ch := range c.Choices {
			if ch.Text != "" {
				gs = append(gs, group{kind: kindContent, text: ch.Text, tokens: 1})
			}
		}
		if u := c.Usage; u != nil && u.PromptTokens > 0 {
			prompt, cached = u.PromptTokens, u.PromptTokensDetails.CachedTokens
		}
		if c.Timings != nil {
			timings = c.Timings
		}
	}
	return id, created, prompt, cached, timings, gs
}

// TestCompletionsLayoutsMatchCaptures pins the Ollama and llama.cpp
// layouts of /v1/completions to their captures.
func TestCompletionsLayoutsMatchCaptures(t *testing.T) {
	for _, tc := range []struct {
		capture      string
		dialect      func() Dialect
		includeUsage bool
	}{
		{"ollama-0.17.4-completions-stream-usage.sse", dialectOllama, true},
		{"ollama-0.17.4-completions-stream-nousage.sse", dialectOllama, false},
		{"llamacpp-b10573-completions-stream-usage.sse", dialectLlamaCppAPIs, true},
		{"llamacpp-b10573-completions-stream-nousage.sse", dialectLlamaCppAPIs, false},
	} {
		t.Run(tc.capture, func(t *testing.T) {
			_, body := readCapture(t, tc.capture)
			var chunks []completionsChunk
			for _, ev := range sseEvents(t, body) {
				if ev.data == "[DONE]" {
					continue
				}
				var c completionsChunk
				require.NoError(t, json.Unmarshal([]byte(ev.data), &c), ev.data)
				chunks = append(chunks, c)
			}
			cfg := Config{Dialect: tc.dialect()}
			id, created, prompt, cached, timings, gs := completionsValues(t, &cfg, chunks)
			sw, rec := testResponse(cfg, completionsAPI{}, request{Stream: true, IncludeUsage: tc.includeUsage}, unix(created))
			sw.st.tr.PromptTokens, sw.st.tr.IncludeUsage, sw.sq.cached = prompt, tc.includeUsage, cached
			f := newCompletionsFramer(sw)
			f.id, f.timings = id, func() []byte { return timings }
			driveFramer(t, sw, f, gs)
			pinned(t, tc.capture, body, rec.Body.Bytes())
		})
	}
}

// TestCompletionsBodiesMatchCaptures pins the non-streamed completions.
func TestCompletionsBodiesMatchCaptures(t *testing.T) {
	for _, tc := range []struct {
		capture string
		dialect func() Dialect
	}{
		{"ollama-0.17.4-completions-nonstream.json", dialectOllama},
		{"llamacpp-b10573-completions-nonstream.json", dialectLlamaCppAPIs},
	} {
		t.Run(tc.capture, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join(transcripts, tc.capture))
			require.NoError(t, err)
			var c completionsChunk
			require.NoError(t, json.Unmarshal(body, &c))
			cfg := Config{Dialect: tc.dialect()}
			id, created, _, _, timings, _ := completionsValues(t, &cfg, []completionsChunk{c})
			sw, _ := testResponse(cfg, completionsAPI{}, request{}, unix(created))
			f := newCompletionsFramer(sw)
			f.id, f.timings = id, func() []byte { return timings }
			a := answer{content: c.Choices[0].Text, finish: "length",
				usage: usage{Prompt: c.Usage.PromptTokens, Completion: c.Usage.CompletionTokens, Cached: c.Usage.PromptTokensDetails.CachedTokens}}
			pinned(t, tc.capture, body, f.answerBody(&a))
		})
	}
}

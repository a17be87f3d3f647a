package fakeserver

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// chatBody is a chat completion request body.
type chatBody struct {
	Model         string         `json:"model,omitempty"`
	Messages      []chatMsg      `json:"messages"`
	Stream        bool           `json:"stream"`
	StreamOptions map[string]any `json:"stream_options,omitempty"`
	MaxTokens     int            `json:"max_tokens,omitempty"`
	IgnoreEOS     bool           `json:"ignore_eos,omitempty"`
	Kwargs        map[string]any `json:"chat_template_kwargs,omitempty"`
}

type chatMsg struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

func streamBody(prompt string, maxTokens int) chatBody {
	return chatBody{
		Messages:      []chatMsg{{Role: "user", Content: prompt}},
		Stream:        true,
		StreamOptions: map[string]any{"include_usage": true},
		MaxTokens:     maxTokens,
	}
}

// post sends body to the chat endpoint with extra headers and returns the
// response with its whole body read (and any read error).
func post(t *testing.T, srv *Server, body chatBody, hdr map[string]string) (*http.Response, []byte, error) {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	return postRaw(t, srv, "/v1/chat/completions", b, hdr)
}

// sseData returns the data payloads of an SSE body (LF or CRLF framed);
// comments are skipped.
func sseData(body []byte) []string {
	s := strings.ReplaceAll(string(body), "\r\n", "\n")
	var out []string
	for _, ev := range strings.Split(s, "\n\n") {
		if d, ok := strings.CutPrefix(ev, "data: "); ok {
			out = append(out, d)
		}
	}
	return out
}

// streamDelta is the part of a chunk the tests read.
type streamDelta struct {
	Choices []struct {
		Delta struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
			Reasoning        string `json:"reasoning"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		TotalTokens         int `json:"total_tokens"`
		PromptTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
}

// decoded is a stream body decoded the way a client reads it.
type decoded struct {
	reasoning, content string
	contentChunks      int
	finish             string
	usage              *streamDelta
	done               bool
	bad                []string // data payloads that are not chunks
}

func decode(body []byte) decoded {
	var d decoded
	for _, data := range sseData(body) {
		if data == "[DONE]" {
			d.done = true
			continue
		}
		var c streamDelta
		if err := json.Unmarshal([]byte(data), &c); err != nil || strings.HasPrefix(data, `{"error"`) {
			d.bad = append(d.bad, data)
			continue
		}
		if c.Usage != nil {
			u := c
			d.usage = &u
		}
		for _, ch := range c.Choices {
			d.reasoning += ch.Delta.ReasoningContent + ch.Delta.Reasoning
			if ch.Delta.Content != "" {
				d.content += ch.Delta.Content
				d.contentChunks++
			}
			if ch.FinishReason != nil {
				d.finish = *ch.FinishReason
			}
		}
	}
	return d
}

package client

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDialectsEncode: each API's body of one prompt (the caller writes
// the quoted prompt between head and tail, the same bytes for every API)
// and of a conversation, its route and its headers.
func TestDialectsEncode(t *testing.T) {
	const temp = `"temperature":0.0`
	for _, tt := range []struct {
		d                    Dialect
		r                    Request
		path, prompt, convo  string
		accept, keyH, keyVal string
	}{
		{Responses, Request{Model: "m", MaxTokens: 8, Thinking: new(false)}, "/responses",
			`{"input":"hi","max_output_tokens":8,"model":"m","reasoning":{"effort":"none"},"stream":true,` + temp + `}`,
			`{"input":[{"content":"be brief","role":"system"},{"content":"hi","role":"user"}],"max_output_tokens":8,"model":"m","reasoning":{"effort":"none"},"stream":true,` + temp + `}`,
			eventStreamType, "Authorization", "Bearer k"},
		{Responses, Request{Model: "m", MaxTokens: 8, Thinking: new(true), TopP: new(0.5)}, "/responses",
			`{"input":"hi","max_output_tokens":8,"model":"m","reasoning":{"effort":"medium"},"stream":true,` + temp + `,"top_p":0.5}`,
			"", eventStreamType, "Authorization", "Bearer k"},
		{Responses, Request{Model: "m", MaxTokens: 8, ReasoningEffort: "low", Extra: map[string]any{"store": false}}, "/responses",
			`{"input":"hi","max_output_tokens":8,"model":"m","reasoning":{"effort":"low"},"store":false,"stream":true,` + temp + `}`,
			"", eventStreamType, "Authorization", "Bearer k"},
		{Messages, Request{Model: "m", MaxTokens: 8, Thinking: new(true)}, "/messages",
			`{"messages":[{"content":"hi","role":"user"}],"max_tokens":8,"model":"m","stream":true,` + temp + `,"thinking":{"budget_tokens":1024,"type":"enabled"}}`,
			`{"max_tokens":8,"messages":[{"content":"hi","role":"user"}],"model":"m","stream":true,"system":"be brief",` + temp + `,"thinking":{"budget_tokens":1024,"type":"enabled"}}`,
			eventStreamType, "X-Api-Key", "k"},
		{Messages, Request{Model: "m", MaxTokens: 8, Thinking: new(false)}, "/messages",
			`{"messages":[{"content":"hi","role":"user"}],"max_tokens":8,"model":"m","stream":true,` + temp + `,"thinking":{"type":"disabled"}}`,
			"", eventStreamType, "X-Api-Key", "k"},
		{Completions, Request{Model: "m", MaxTokens: 8, Temperature: new(0.7)}, "/completions",
			`{"prompt":"hi","max_tokens":8,"model":"m","stream":true,"stream_options":{"include_usage":true},"temperature":0.7}`,
			"", eventStreamType, "Authorization", "Bearer k"},
		{Embeddings, Request{Model: "m", MaxTokens: 8, Temperature: new(0.7), Thinking: new(true)}, "/embeddings",
			`{"input":"hi","encoding_format":"float","model":"m"}`,
			`{"encoding_format":"float","input":["be brief","hi"],"model":"m"}`,
			jsonType, "Authorization", "Bearer k"},
		{Embeddings, Request{Model: "m", EncodingFormat: "base64"}, "/embeddings",
			`{"input":"hi","encoding_format":"base64","model":"m"}`, "", jsonType, "Authorization", "Bearer k"},
	} {
		require.Equal(t, tt.path, tt.d.Path())
		head, tail, err := tt.d.Encode(&tt.r)
		require.NoError(t, err)
		require.Equal(t, tt.prompt, string(head)+`"hi"`+string(tail), tt.path)
		if tt.convo != "" {
			r := tt.r
			r.Messages = []Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}}
			head, tail, err := tt.d.Encode(&r)
			require.NoError(t, err)
			require.Empty(t, tail)
			require.Equal(t, tt.convo, string(head), tt.path)
		}
		h := http.Header{}
		tt.d.Header(h, "k")
		require.Equal(t, tt.accept, h.Get("Accept"))
		require.Equal(t, tt.keyVal, h.Get(tt.keyH))
		if tt.d == Messages {
			require.Equal(t, "2023-06-01", h.Get("Anthropic-Version"))
			require.Empty(t, h.Get("Authorization"))
		}
		h = http.Header{}
		tt.d.Header(h, "")
		require.Empty(t, h.Get(tt.keyH), "no key, no credential header")
	}
}

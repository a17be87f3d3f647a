package client

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestChatEncode: the chat dialect writes a prompt's body as the
// reference does (messages, then the other fields sorted by name, 0.0 for
// the default temperature) and a conversation whole, with the same
// fields after it.
func TestChatEncode(t *testing.T) {
	r := &Request{Model: "m", MaxTokens: 8, Thinking: new(false), Extra: map[string]any{"ignore_eos": true}}
	head, tail, err := ChatCompletions.Encode(r)
	require.NoError(t, err)
	fields := `"chat_template_kwargs":{"enable_thinking":false},"ignore_eos":true,"max_tokens":8,"model":"m","stream":true,"stream_options":{"include_usage":true},"temperature":0.0}`
	require.Equal(t, `{"messages":[{"content":"hi","role":"user"}],`+fields, string(head)+`"hi"`+string(tail))

	r.Messages = []Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "<hi>"}}
	r.Thinking, r.ReasoningEffort, r.TopP = nil, "low", new(0.5)
	head, tail, err = ChatCompletions.Encode(r)
	require.NoError(t, err)
	require.Empty(t, tail)
	require.Equal(t, `{"messages":[{"content":"be brief","role":"system"},{"content":"<hi>","role":"user"}],`+
		`"ignore_eos":true,"max_tokens":8,"model":"m","reasoning_effort":"low","stream":true,"stream_options":{"include_usage":true},"temperature":0.0,"top_p":0.5}`, string(head))

	_, err = NewEncoder(ChatCompletions, r)
	require.Error(t, err, "an Encoder is for prompts")
	r.Messages, r.Extra = nil, map[string]any{"bad": func() {}}
	_, err = NewEncoder(ChatCompletions, r)
	require.Error(t, err, "a field that does not encode")
}

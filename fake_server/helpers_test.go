package fakeserver_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	fakeserver "github.com/anvilbench/anvil/fake_server"
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
func post(t *testing.T, srv *fakeserver.Server, body chatBody, hdr map[string]string) (*http.Response, []byte, error) {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequest("POST", srv.URL+"/v1/chat/completions", bytes.NewReader(b))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, rerr := io.ReadAll(resp.Body)
	return resp, data, rerr
}

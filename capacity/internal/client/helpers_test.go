package client

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// transcripts holds the real engines' captures (the module's testdata).
const transcripts = "../../../testdata/transcripts"

// testEncoder is the chat encoder of a run's fixed request fields (model
// "m", max_tokens maxTokens).
func testEncoder(t testing.TB, maxTokens int) *Encoder {
	enc, err := NewEncoder(ChatCompletions, &Request{Model: "m", MaxTokens: maxTokens})
	require.NoError(t, err)
	return enc
}

// testClient is New(cfg) with what a test leaves out: the base URL
// http://pipe.invalid/v1, a timeout of a minute and max_tokens 64.
func testClient(t testing.TB, cfg Config) *Client {
	if cfg.BaseURL == "" {
		cfg.BaseURL = "http://pipe.invalid/v1"
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = time.Minute
	}
	if cfg.Checks.MaxTokens == 0 {
		cfg.Checks.MaxTokens = 64
	}
	cl, err := New(cfg)
	require.NoError(t, err)
	return cl
}

// promptBody is the request body of the prompt "prompt".
func promptBody(t testing.TB, maxTokens int) *Buffer {
	var b Buffer
	b.Set(testEncoder(t, maxTokens).AppendBody(b.Reset(), []byte("prompt")))
	return &b
}

// sendPrompt sends one request of the prompt "prompt" with the client of
// cfg (see testClient) and evaluates it as measured request 0 planned at
// 512 tokens.
func sendPrompt(t testing.TB, cfg Config) (*Exchange, *artifact.TimingRow, *artifact.Failure) {
	cl := testClient(t, cfg)
	ex := &Exchange{Planned: 512}
	cl.Send(t.Context(), promptBody(t, cl.checks.MaxTokens), ex)
	row, f := cl.Evaluate(ex)
	return ex, row, f
}

package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServe runs the command on a free port, streams one completion with a
// per-request fault flag applied, and stops it by cancelling the context.
func TestServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-profile", "fast", "-dialect", "ollama",
			"-reasoning-tokens", "0", "-fault-at", "1=http_503", "-crlf"}, pw)
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	require.True(t, lines.Scan())
	url := regexp.MustCompile(`http://\S+/v1`).FindString(lines.Text())
	require.NotEmpty(t, url, lines.Text())
	go func() { _, _ = io.Copy(io.Discard, pr) }()

	post := func() *http.Response {
		resp, err := http.Post(url+"/chat/completions", "application/json",
			strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"exactly 2 words code"}]}`))
		require.NoError(t, err)
		return resp
	}
	resp := post()
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	assert.Contains(t, string(body), `"delta":{"role":"assistant","content":"code"}`)
	assert.True(t, strings.HasSuffix(string(body), "data: [DONE]\r\n\r\n"), "CRLF framing")
	assert.NotContains(t, string(body), `"reasoning"`)

	resp = post()
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "-fault-at 1=http_503")

	cancel()
	require.NoError(t, <-done)
}

func TestFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-profile", "huge"}, `profile "huge"`},
		{[]string{"-dialect", "tgi"}, `dialect "tgi"`},
		{[]string{"-fault-at", "x=drop"}, "want INDEX=FAULT"},
		{[]string{"-fault-prob", "drop=2"}, "Probability[drop] = 2: want 0..1"},
		{[]string{"-spec-tokens", "3,1"}, "SpecTokens = {3, 1}"},
		{[]string{"-usage", "sometimes"}, "want final, last-choice or none"},
	} {
		err := run(context.Background(), tc.args, io.Discard)
		require.Error(t, err, "%v", tc.args)
		assert.Contains(t, err.Error(), tc.want)
	}
}

package main

import (
	"bufio"
	"context"
	"flag"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	fakeserver "github.com/anvilbench/anvil/fake_server"
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
		{[]string{"-fault-at", "x=drop"}, `index "x": want INDEX=FAULT with INDEX >= 0`},
		{[]string{"-fault-at", "3"}, `"3": want INDEX=FAULT,...`},
		{[]string{"-fault-prob", "drop=often"}, `probability "often": want FAULT=PROBABILITY with PROBABILITY in 0..1`},
		{[]string{"-fault-prob", "boom=0.1"}, `fault "boom": want one of`},
		{[]string{"-fault-prob", "drop=2"}, "Probability[drop] = 2: want 0..1"},
		{[]string{"-spec-tokens", "3,1"}, "SpecTokens = {3, 1}"},
		{[]string{"-usage", "sometimes"}, "want final, last-choice or none"},
		// Validate's errors name the flag as well as the field.
		{[]string{"-spec-tokens", "3,1"}, "-spec-tokens: SpecTokens = {3, 1}: want 1 <= Min <= Max"},
		{[]string{"-chars-per-token", "NaN"}, "-chars-per-token: CharsPerToken = NaN: want 0.5..64"},
		{[]string{"-fault-prob", "drop=NaN"}, "-fault-prob: Faults.Probability[drop] = NaN: want 0..1"},
		{[]string{"-time-scale", "-1"}, "-time-scale: TimeScale = -1: want a finite factor > 0"},
		{[]string{"-keep-alive", "-1s"}, "-keep-alive: Dialect.KeepAlive = -1s: want >= 0"},
		// A zero that Config would replace with a default is refused.
		{[]string{"-prefill-tok-s", "0"}, "-prefill-tok-s 0: want a finite rate > 0"},
		{[]string{"-time-scale", "-0"}, "-time-scale -0: want a finite factor > 0"},
		{[]string{"-stall", "0s"}, "-stall 0s: want > 0"},
		{[]string{"-spec-tokens", "0"}, "-spec-tokens 0,0: want 1 <= MIN <= MAX"},
		{[]string{"-model", ""}, `-model "": want a non-empty model id`},
		{[]string{"-addr", "127.0.0.1:0", "serve"}, `unexpected argument "serve"`},
	} {
		err := run(context.Background(), tc.args, io.Discard)
		require.Error(t, err, "%v", tc.args)
		assert.Contains(t, err.Error(), tc.want)
	}
}

// TestKnobFieldsNameFlags: every flag named in knobFields exists, so a
// Validate error is always mapped to a real flag.
func TestKnobFieldsNameFlags(t *testing.T) {
	cfg := fakeserver.Fast()
	fs := flag.NewFlagSet("fakeserver", flag.ContinueOnError)
	knobs(fs, &cfg)
	for _, k := range knobFields {
		assert.NotNil(t, fs.Lookup(k.flag), "-%s (%s)", k.flag, k.field)
	}
}

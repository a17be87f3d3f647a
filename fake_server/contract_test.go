package fakeserver

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// small is a compact deterministic config for golden transcripts.
func small() Config {
	c := Fast()
	c.ReasoningTokens = Range{Min: 3, Max: 3}
	c.AnswerTokens = Range{Min: 4, Max: 4}
	c.SpecTokens = Range{Min: 1, Max: 2}
	c.Seed = 7
	return c
}

// goldenPrompt asks for a marker and exactly three words code.
const goldenPrompt = "def helper_0():\n    return compute(0)  # routine specialist context\n" +
	"Begin your answer with ANVIL_REQ_1717_00004. Then answer with exactly 3 words: the lowercase word code."

// transcript renders a response as the golden file holds it: status line,
// the headers the contract fixes, a blank line, the raw body.
func transcript(resp *http.Response, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP %d\n", resp.StatusCode)
	for _, k := range []string{"Content-Type", "Retry-After", requestIDHeader} {
		if v := resp.Header.Get(k); v != "" {
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
	}
	b.WriteString("\n")
	b.Write(body)
	return b.Bytes()
}

// golden compares got with testdata/golden/name, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run go test -update")
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-golden +got):\n%s", path, diff)
	}
}

// traceJSON is a trace as the golden file holds it.
func traceJSON(t *testing.T, tr Trace) []byte {
	b, err := json.MarshalIndent(tr, "", "  ")
	require.NoError(t, err)
	return append(b, '\n')
}

// TestDialectGoldens pins the exact bytes of every dialect, and the trace
// (the timing model) of the default one.
func TestDialectGoldens(t *testing.T) {
	for _, tc := range []struct {
		name    string
		dialect func(*Dialect)
		body    func(*chatBody)
	}{
		{name: "vllm", dialect: func(d *Dialect) { *d = dialectVLLM() }},
		{name: "zero"},
		{name: "ollama", dialect: func(d *Dialect) { *d = dialectOllama() }},
		{name: "mock-llm", dialect: func(d *Dialect) { *d = dialectMockLLM() }},
		{name: "reasoning-field", dialect: func(d *Dialect) { d.ReasoningField = "reasoning" }},
		{name: "usage-last-choice", dialect: func(d *Dialect) { d.Usage = usageLastChoice }},
		{name: "usage-omitted", dialect: func(d *Dialect) { d.Usage = usageNone }},
		{name: "usage-not-requested", body: func(b *chatBody) { b.StreamOptions = nil }},
		{name: "omit-done", dialect: func(d *Dialect) { d.OmitDone = true }},
		{name: "crlf", dialect: func(d *Dialect) { d.CRLF = true }},
		{name: "finish-chunk", dialect: func(d *Dialect) { d.FinishChunk = true }},
		{name: "role-every-delta", dialect: func(d *Dialect) { d.Role = roleEvery }},
		{name: "event-fields", dialect: func(d *Dialect) { d.EventName, d.EventIDs, d.SplitData = "message", true, true }},
		{name: "keep-alive", dialect: func(d *Dialect) { d.KeepAlive = 100 * time.Microsecond }},
		{name: "no-thinking", body: func(b *chatBody) { b.Kwargs = map[string]any{"enable_thinking": false} }},
		{name: "non-stream", body: func(b *chatBody) { b.Stream, b.StreamOptions = false, nil }},
		{name: "non-stream-ollama", dialect: func(d *Dialect) { *d = dialectOllama() },
			body: func(b *chatBody) { b.Stream, b.StreamOptions = false, nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := small()
				if tc.dialect != nil {
					tc.dialect(&cfg.Dialect)
				}
				if tc.name == "keep-alive" {
					cfg.PrefillTokensPerSecond = 100_000 // 52 prompt tokens: 520µs of silence
				}
				srv := NewInMemory(cfg)
				defer srv.Close()
				body := streamBody(goldenPrompt, 64)
				if tc.body != nil {
					tc.body(&body)
				}
				resp, data, err := post(t, srv, body, map[string]string{requestIDHeader: "golden-" + tc.name})
				require.NoError(t, err)
				golden(t, tc.name+".sse", transcript(resp, data))
				synctest.Wait()
				tr, ok := srv.TraceByRequestID("golden-" + tc.name)
				require.True(t, ok)
				require.True(t, tr.Done())
				if tc.name == "vllm" || tc.name == "keep-alive" || tc.name == "non-stream" {
					golden(t, tc.name+".trace.json", traceJSON(t, tr))
				}
			})
		})
	}
}

// TestErrorGoldens pins the OpenAI-style error bodies and the metadata
// endpoints.
func TestErrorGoldens(t *testing.T) {
	long := strings.Repeat("x", 40000) // 12,679 tokens at 3.155 characters per token
	for _, tc := range []struct {
		name, method, path, body string
	}{
		{"unknown-model", "POST", "/v1/chat/completions", `{"model":"nope","messages":[{"role":"user","content":"hi"}]}`},
		{"context-overflow", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"` + long + long + long + `"}],"max_tokens":64}`},
		{"bad-body", "POST", "/v1/chat/completions", `{"messages":"hi"}`},
		{"bad-json", "POST", "/v1/chat/completions", `{"messages":[`},
		{"no-messages", "POST", "/v1/chat/completions", `{"messages":[]}`},
		{"bad-max-tokens", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":0}`},
		{"bad-fault-header", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}]}`},
		{"models", "GET", "/v1/models", ""},
		{"tokenize", "POST", "/tokenize", `{"prompt":"def helper_0():\n    return compute(0)\n"}`},
		{"tokenize-messages", "POST", "/tokenize", `{"messages":[{"role":"user","content":"hi there"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := NewInMemory(small())
				defer srv.Close()
				req, err := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
				require.NoError(t, err)
				if tc.name == "bad-fault-header" {
					req.Header.Set(faultHeader, "no_such_fault")
				}
				resp, err := srv.Client().Do(req)
				require.NoError(t, err)
				defer resp.Body.Close()
				data, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				golden(t, tc.name+".txt", transcript(resp, data))
			})
		})
	}
}

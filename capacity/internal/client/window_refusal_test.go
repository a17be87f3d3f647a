package client

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// FuzzParseWindowRefusal: any text parses or not without panicking, and a
// parsed refusal has positive counts.
func FuzzParseWindowRefusal(f *testing.F) {
	f.Add(string(wiretest.ReadTranscript(f, "llamacpp-b10573-stream-over-window.json")))
	f.Add(`{"error":{"type":"exceed_context_size_error","n_prompt_tokens":1e3,"n_ctx":2.5}}`)
	f.Fuzz(func(t *testing.T, s string) {
		if r, ok := parseWindowRefusal(s); ok {
			require.Positive(t, r.PromptTokens)
			require.Positive(t, r.Window)
		}
	})
}

// TestParseWindowRefusal: the captured llama.cpp refusal, quoted in a
// failure message, is read; other error bodies and cut ones are not.
func TestParseWindowRefusal(t *testing.T) {
	captured := string(wiretest.ReadTranscript(t, "llamacpp-b10573-stream-over-window.json"))
	tests := []struct {
		text string
		want WindowRefusal
		ok   bool
	}{
		{captured, WindowRefusal{44722, 8192}, true},
		{"HTTP 400 Bad Request: " + captured, WindowRefusal{44722, 8192}, true},
		{"HTTP 400 Bad Request: " + captured[:120] + "...", WindowRefusal{}, false},
		{string(wiretest.ReadTranscript(t, "ollama-0.17.4-bad-body.json")), WindowRefusal{}, false},
		{strings.Replace(captured, `"n_ctx":8192`, `"n_ctx":-1`, 1), WindowRefusal{}, false},
		{strings.Replace(captured, "exceed_context_size_error", "invalid_request_error", 1), WindowRefusal{}, false},
		{"no body", WindowRefusal{}, false},
		// Any other 400 is no refusal over the window.
		{`{"error":{"code":400,"message":"x","type":"invalid_request_error"}}`, WindowRefusal{}, false},
		{`{"error":{"type":"exceed_context_size_error","n_prompt_tokens":0,"n_ctx":8192}}`, WindowRefusal{}, false},
		{`exceed_context_size_error`, WindowRefusal{}, false},
	}
	for i, tt := range tests {
		got, ok := parseWindowRefusal(tt.text)
		require.Equal(t, tt.ok, ok, "case %d", i)
		require.Equal(t, tt.want, got, "case %d", i)
	}
}

// TestServerTimingsOf: a timings object that is not an object, or whose
// members are not numbers of their kind, gives nothing for them.
func TestServerTimingsOf(t *testing.T) {
	for _, raw := range []string{`[]`, `{"prompt_ms":"1"}`, `{"cache_n":1.5,"prompt_ms":-1}`} {
		st := serverTimingsOf([]byte(raw))
		if raw == `[]` {
			require.Nil(t, st)
			continue
		}
		require.Nil(t, st.PromptMS, raw)
		require.Nil(t, st.CacheN, raw)
	}
}

// TestCountedAsPlannedIsNoCut: a prompt the server counted exactly as
// planned was processed whole, however far above the window known (a
// server serving a larger one): no prompt_truncated failure, where a 10
// million-token row counted in full was once failed as "the server cut
// the prompt to its window". A count at the window short of the plan is
// still a cut.
func TestCountedAsPlannedIsNoCut(t *testing.T) {
	for _, tc := range []struct {
		planned, counted int64
		cut              bool
	}{
		{10_000_000, 10_000_000, false},
		{40000, 32768, true},
		{30000, 30000, false},
	} {
		ex := &Exchange{}
		ex.stream.usage.Prompt = Count{v: tc.counted, ok: true}
		ex.stream.usage.Completion = Count{v: 8, ok: true}
		checkPromptTokens(ex, int(tc.planned), 32768, WindowOrigin{Source: "/v1/models"})
		class, message := ex.Failure()
		require.Equal(t, tc.cut, class != "", "planned %d, counted %d: %q", tc.planned, tc.counted, message)
		if tc.cut {
			require.Equal(t, ErrorTypePromptTruncated, ex.errType)
		}
	}
}

package reporters

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

func TestConnectionNote(t *testing.T) {
	require.Empty(t, connectionNote(&artifact.Report{}))
	require.Empty(t, connectionNote(&artifact.Report{AnvilGo: &artifact.Extension{Connections: &artifact.Connections{Prewarmed: 4}}}))
	r := &artifact.Report{AnvilGo: &artifact.Extension{Connections: &artifact.Connections{KeptAliveClosed: 2, ReuseDisabled: true}}}
	require.Equal(t, "the server closed kept-alive connections right after answering on them (2 seen; llama.cpp's llama-server does after every streamed answer): the rest of the run reused no connection, so each request's dial is inside its timings", connectionNote(r))
}

func TestClampNote(t *testing.T) {
	ptr := func(v int) *int { return &v }
	for _, tc := range []struct {
		name string
		r    artifact.Report
		want string
	}{
		{"fits", artifact.Report{ContextTokens: ptr(4096), MaxContextTokens: ptr(32768),
			ContextDistribution: map[int]int{4096: 8}}, ""},
		{"sampled contexts", artifact.Report{MaxContextTokens: ptr(32768),
			ContextDistribution: map[int]int{16000: 3, 30720: 5}}, ""},
		{"clamped", artifact.Report{ContextTokens: ptr(65536), MaxContextTokens: ptr(32768), MaxTokens: 1024,
			ContextDistribution: map[int]int{30720: 4}},
			"context 65536 does not fit the served model's prompt budget of 30720 tokens (max model length 32768 - max_tokens 1024 - margin 1024): requests planned at [30720] tokens instead"},
		// The issue's: the context asked for is the model's length, which
		// holds the answer and the margin too.
		{"context of the model's length", artifact.Report{ContextTokens: ptr(8192), MaxContextTokens: ptr(8192), MaxTokens: 64,
			ContextDistribution: map[int]int{7104: 4}},
			"context 8192 does not fit the served model's prompt budget of 7104 tokens (max model length 8192 - max_tokens 64 - margin 1024): requests planned at [7104] tokens instead"},
		{"unknown length", artifact.Report{ContextTokens: ptr(65536),
			ContextDistribution: map[int]int{30720: 4, 65536: 0}},
			"context 65536 does not fit the served model's prompt budget of 30720 tokens (max model length unknown, less max_tokens and the margin kept free): requests planned at [30720] tokens instead"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, clampNote(&tc.r))
		})
	}
}

// TestRunLog: the population line, then the notes, then the failures of
// the requests sent by class; the never-sent request of an interrupted
// run is counted apart, its cancelled row is no failure, and text from
// the server is escaped.
func TestRunLog(t *testing.T) {
	ptr := func(v int) *int { return &v }
	r := &artifact.Report{
		Model: "m\x1b[31m", MeasurementProtocol: "capacity-v4-reasoning", Requests: 3, Completed: 1, Failed: 2, WallClockMS: 1500,
		ContextTokens: ptr(65536), MaxContextTokens: ptr(32768), ContextDistribution: map[int]int{30720: 3},
		Failures: []artifact.Failure{
			{RequestIndex: 1, FailureClass: "http_error", ErrorMessage: "boom\u202e"},
			{RequestIndex: 2, FailureClass: artifact.FailureCancelled},
		},
		AnvilGo: &artifact.Extension{
			Run: &artifact.RunSummary{SentRequests: 2},
			Requests: []artifact.RequestDetail{
				{RequestIndex: 0, Outcome: artifact.OutcomeSuccess},
				{RequestIndex: 1, Outcome: "failed"},
				{RequestIndex: 2, Outcome: artifact.OutcomeNeverSent},
			},
		},
	}
	require.Equal(t, []string{
		`m\x1b[31m: 3 requests planned, 2 sent, 1 succeeded, 1 failed, 1 never sent, wall 1500 ms, protocol capacity-v4-reasoning, eligible false`,
		"context 65536 does not fit the served model's prompt budget of 30720 tokens (max model length 32768 - max_tokens 0 - margin 2048): requests planned at [30720] tokens instead",
		`failures by class: http_error 1; first: request 1: boom\u202e`,
	}, RunLog(r))
}

// TestNoUsageNote: successes without usage.prompt_tokens (Ollama ends a
// stream it cut for repeating tokens with no usage chunk) are counted in
// the log, since the truncation check could not cover them.
func TestNoUsageNote(t *testing.T) {
	n := 4096
	require.Empty(t, noUsageNote(&artifact.Report{}))
	require.Empty(t, noUsageNote(&artifact.Report{RequestTimings: []artifact.TimingRow{{PromptTokens: &n}}}))
	r := &artifact.Report{RequestTimings: []artifact.TimingRow{{PromptTokens: &n}, {}, {}}}
	want := "2 of 3 successful requests reported no usage.prompt_tokens: their prompts were never counted, so no truncation check or prompt-plan comparison covers them, and they have no token rates"
	require.Equal(t, want, noUsageNote(r))
	require.Contains(t, RunLog(r), want)
}

// TestWindowDisagreementInHTML: a window declared above the one the server
// advertises (ANVIL_MAX_MODEL_LEN=16384 against Ollama's 4096) is named in
// the HTML header, where "served context" alone showed 16384.
func TestWindowDisagreementInHTML(t *testing.T) {
	adv, src, note := 4096, "/api/ps", "Target.MaxModelLen 16384 is above the window of 4096 tokens the server advertises (/api/ps)"
	r := &artifact.Report{AnvilGo: &artifact.Extension{ContextWindow: &artifact.ContextWindow{Tokens: 4096, Source: "/api/ps", TruncationWindow: 4096, Advertised: &adv, AdvertisedSource: &src}}}
	require.Empty(t, windowDisagreement(r), "a window the server advertised, used as is")
	r.AnvilGo.ContextWindow = &artifact.ContextWindow{Tokens: 16384, Source: "Target.MaxModelLen", TruncationWindow: 4096, Advertised: &adv, AdvertisedSource: &src, Note: &note}
	want := "context window 16384 tokens from Target.MaxModelLen, the server advertises 4096 (/api/ps), truncation checked at 4096: " + note
	require.Equal(t, want, windowDisagreement(r))
	var found bool
	for _, f := range identityFields(r, extView{}) {
		found = found || f == viewField{"context window", strings.TrimPrefix(want, "context window ")}
	}
	require.True(t, found, "the header names the disagreement")
}

// TestReadableCounts: counts read as sentences: classes in order without
// Go's map syntax, and one request is "1 request".
func TestReadableCounts(t *testing.T) {
	require.Equal(t, "cancelled 2, http_error 2", byClass(map[string]int{"http_error": 2, "cancelled": 2}))
	require.Equal(t, `\x1b 1, timeout 3`, byClass(map[string]int{"timeout": 3, "\x1b": 1}))
	require.Equal(t, "none", byClass(nil))
	require.Equal(t, "1 request", counted(1, "request"))
	require.Equal(t, "0 requests", counted(0, "request"))
	require.Equal(t, "60 requests", counted(60, "request"))
}

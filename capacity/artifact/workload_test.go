package artifact

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// traceExtension is an anvil_go object of a replay and of sessions, every
// key of workload.go set.
func traceExtension() *Extension {
	return &Extension{
		Version: extensionVersion,
		Workload: &Workload{Kind: WorkloadTrace,
			Trace: &TraceWorkload{File: "mooncake-conversation_trace-first500.jsonl", Format: "mooncake",
				SHA256: "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0", Bytes: 1234567,
				Rows: 500, FirstLine: 1, LastLine: 500, SpeedUp: 20, WindowStartMS: 1000, WindowEndMS: new(61000.0), First: 500},
			SendLagMS: &SendLag{Requests: 2, P50: 0.25, P99: 1.5, Max: 1.5}},
		Requests: []RequestDetail{
			{RequestIndex: 0, Outcome: OutcomeSuccess, SentMS: new(0.25), PlannedPromptTokens: 1024, CountedPromptTokens: new(1019),
				TraceLine: new(1), PlannedOutputTokens: new(12), CountedOutputTokens: new(12), CachedPromptTokens: new(0)},
			{RequestIndex: 1, Outcome: OutcomeSuccess, SentMS: new(51.5), PlannedPromptTokens: 1536, CountedPromptTokens: new(1530),
				TraceLine: new(2), Session: new("s1"), Turn: new(2), PlannedOutputTokens: new(30), CountedOutputTokens: new(29), CachedPromptTokens: new(1024)},
		},
	}
}

// TestWorkloadGolden pins the workload members as written and their exact
// round trip.
func TestWorkloadGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		ext  func() *Extension
	}{
		{"trace", traceExtension},
		{"sessions", func() *Extension {
			x := traceExtension()
			x.Workload = &Workload{Kind: WorkloadSessions,
				Sessions: &SessionsWorkload{Spec: new("turns=3,user=200,output=128,think=2s,think_dist=fixed,seed=0"), Sessions: 4, Users: new(2)}}
			return x
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			extensionGolden(t, tc.ext(), "workload-"+tc.name+".golden.json")
		})
	}
}

// TestWorkloadKeysOnlyWhenSet: a synthetic run's request objects carry
// none of the source keys, and anvil_go no workload.
func TestWorkloadKeysOnlyWhenSet(t *testing.T) {
	r := syntheticReport()
	require.NoError(t, r.Recompute())
	r.AnvilGo = &Extension{Version: extensionVersion, Requests: []RequestDetail{{RequestIndex: 0, Outcome: OutcomeSuccess, PlannedPromptTokens: 7}}}
	var buf bytes.Buffer
	require.NoError(t, write(&buf, r))
	x := generic(t, buf.Bytes()).(map[string]any)["anvil_go"]
	require.Equal(t, []string{"requests", "version"}, sortedKeys(x))
	req := x.(map[string]any)["requests"].([]any)[0]
	require.Equal(t, []string{"counted_prompt_tokens", "end_ms", "first_content_ms", "first_output_ms", "itl_ms", "outcome",
		"output_chunks", "phases", "planned_prompt_tokens", "queue_ms", "request_index", "scheduled_e2e_ms", "scheduled_ms",
		"scheduled_ttft_ms", "sent_ms", "stalls", "tokens_per_chunk"}, sortedKeys(req))
}

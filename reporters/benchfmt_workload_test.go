package reporters

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// TestBenchfmtNamesTracesAndSessions: a replay's .bench result is named
// trace=<file> and its workload key carries the trace's SHA-256 and the
// replay options; sessions are named sessions=<spec>; both read back.
func TestBenchfmtNamesTracesAndSessions(t *testing.T) {
	replay := loadReport(t, seedPath)
	replay.AnvilGo = &artifact.Extension{Version: 1}
	replay.AnvilGo.Workload = &artifact.Workload{Kind: artifact.WorkloadTrace, Trace: &artifact.TraceWorkload{
		File: "my trace.jsonl", Format: "jsonl", SHA256: strings.Repeat("ab", 32), Rows: 40, SpeedUp: 10,
		WindowStartMS: 1000, WindowEndMS: new(61000.0), First: 40}}
	sessions := loadReport(t, seedPath)
	sessions.AnvilGo = &artifact.Extension{Version: 1}
	sessions.AnvilGo.Workload = &artifact.Workload{Kind: artifact.WorkloadSessions, Sessions: &artifact.SessionsWorkload{
		Spec: new("turns=3,user=200,output=128,think=2s,think_dist=fixed,seed=0"), Sessions: 4, Users: new(2)}}

	require.Equal(t, "BenchmarkCapacity/trace=my_trace.jsonl/conc=1", benchName(replay))
	require.Equal(t, "BenchmarkCapacity/sessions=turns=3,user=200,output=128,think=2s,think_dist=fixed,seed=0/conc=1", benchName(sessions))
	id := workloadIdentity(replay)
	for _, part := range []string{"trace=my_trace.jsonl", "trace-sha256=" + strings.Repeat("ab", 32), "trace-format=jsonl",
		"trace-rows=40", "speed-up=10", "window-ms=1000..61000", "first=40"} {
		require.Contains(t, strings.Fields(id), part, id)
	}
	require.Contains(t, strings.Fields(workloadIdentity(sessions)), "sessions=turns=3,user=200,output=128,think=2s,think_dist=fixed,seed=0")
	require.Contains(t, strings.Fields(workloadIdentity(sessions)), "users=2")

	other := loadReport(t, seedPath)
	other.AnvilGo = &artifact.Extension{Version: 1}
	other.AnvilGo.Workload = &artifact.Workload{Kind: artifact.WorkloadTrace, Trace: &artifact.TraceWorkload{
		File: "my trace.jsonl", Format: "jsonl", SHA256: strings.Repeat("cd", 32), Rows: 40, SpeedUp: 10}}
	require.NotEqual(t, workloadIdentity(replay), workloadIdentity(other), "another trace of the same name is another workload")

	var buf bytes.Buffer
	require.NoError(t, writeBenchfmt(&buf, replay, sessions))
	p := parseBench(t, buf.Bytes())
	require.Empty(t, p.errs)
	require.Len(t, p.results, 2)
	require.Equal(t, benchName(replay), "Benchmark"+string(p.results[0].Name))
	require.Equal(t, benchName(sessions), "Benchmark"+string(p.results[1].Name))
	require.Equal(t, workloadIdentity(replay), benchConfigMap(p.results[0])[configWorkload])
}

package capacity

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// tracesByIndex maps the fake's ground-truth traces to request indexes by
// the canary marker each answer began with.
func tracesByIndex(t testing.TB, srv *fakeserver.Server, seed int64) map[int]fakeserver.Trace {
	t.Helper()
	prefix := CanaryMarkerPrefix + strconv.FormatInt(seed, 10) + "_"
	out := make(map[int]fakeserver.Trace)
	for _, tr := range srv.Traces() {
		require.True(t, tr.Done(), "trace %d is final", tr.Index)
		if !strings.HasPrefix(tr.Marker, prefix) {
			continue // a warm-up request: no canary
		}
		i, err := strconv.Atoi(strings.TrimPrefix(tr.Marker, prefix))
		require.NoError(t, err)
		require.NotContains(t, out, i, "one trace per index")
		out[i] = tr
	}
	return out
}

// countChunks counts the trace's chunks of one kind.
func countChunks(tr fakeserver.Trace, kind fakeserver.ChunkKind) int {
	n := 0
	for _, c := range tr.Chunks {
		if c.Kind == kind {
			n++
		}
	}
	return n
}

// reportJSON encodes a report for whole-document comparisons.
func reportJSON(t *testing.T, r *Report) string {
	t.Helper()
	b, err := json.Marshal(r)
	require.NoError(t, err)
	return string(b)
}

// TestRunExactUnderFakeTime is the exactness contract: with the fake's
// in-memory transport inside a synctest bubble, every request's TTFO, TTFT
// and E2E equal the server's ground-truth write times to the nanosecond,
// and token and chunk counts equal what the server sent.
func TestRunExactUnderFakeTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fakeserver.NewInMemory(fakeserver.Reasoning())
		defer srv.Close()
		const seed = 1717
		rep, err := Run(t.Context(),
			Target{BaseURL: srv.URL + "/v1", HTTPClient: srv.Client(), Engine: "fake", GPU: "none"},
			Workload{Requests: 60, Concurrency: 8, Seed: seed, MaxTokens: 1024, RequestCanaries: true, Warmup: 2})
		require.NoError(t, err)
		synctest.Wait() // every handler has recorded its trace

		require.Equal(t, "fake-reasoning", rep.Model, "model taken from /models")
		require.Equal(t, 262144, *rep.MaxContextTokens, "context length probed from /models")
		require.Equal(t, 60, rep.Requests)
		require.Equal(t, 60, rep.Completed, "failures: %+v", rep.Failures)
		require.Empty(t, rep.Failures)
		require.True(t, rep.PerformanceEligible)
		require.Equal(t, ProtocolV4Reasoning, rep.MeasurementProtocol)
		require.Len(t, srv.Traces(), 62, "2 warm-up + 60 measured requests")

		traces := tracesByIndex(t, srv, seed)
		require.Len(t, traces, 60)
		for i, row := range rep.RequestTimings {
			require.Equal(t, i, row.RequestIndex)
			tr := traces[i]
			require.Equal(t, monoMS(tr.FirstReasoning), row.TimeToFirstOutputMS, "request %d TTFO", i)
			require.Equal(t, monoMS(tr.FirstContent), row.TTFTMS, "request %d TTFT", i)
			require.Equal(t, monoMS(tr.Last), row.E2EMS, "request %d E2E", i)
			require.Equal(t, tr.CompletionTokens, row.OutputTokens, "request %d completion tokens", i)
			require.Equal(t, tr.PromptTokens, *row.PromptTokens, "request %d prompt tokens", i)
			require.Equal(t, countChunks(tr, fakeserver.ChunkContent), row.ContentChunks)
			require.Equal(t, countChunks(tr, fakeserver.ChunkReasoning), row.ReasoningChunks)
			require.Equal(t, SourceUsage, row.OutputTokenSource)
			require.True(t, row.RequestCanary.Passed)
			require.Equal(t, rep.ContextDistribution[row.PlannedContextTokens] > 0, true)
		}

		before := reportJSON(t, rep)
		require.NoError(t, rep.Recompute())
		require.Equal(t, before, reportJSON(t, rep), "Recompute leaves the report unchanged")
	})
}

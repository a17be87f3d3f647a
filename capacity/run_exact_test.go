package capacity

import (
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
	fakeserver "github.com/anvilbench/anvil/fake_server"
	"github.com/anvilbench/anvil/stats"
)

// tracesByIndex maps the fake's ground-truth traces to request indexes by
// the canary marker each answer began with.
func tracesByIndex(t testing.TB, srv *fakeserver.Server, seed int64) map[int]fakeserver.Trace {
	t.Helper()
	prefix := client.CanaryMarkerPrefix + strconv.FormatInt(seed, 10) + "_"
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
func countChunks(tr fakeserver.Trace, kind string) int {
	n := 0
	for _, c := range tr.Chunks {
		if c.Kind == kind {
			n++
		}
	}
	return n
}

// reportJSON encodes a report for whole-document comparisons.
func reportJSON(t *testing.T, r *artifact.Report) string {
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
		srv := fakeserver.NewInMemory(fakeProfile("reasoning"))
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
		require.Equal(t, "capacity-v4-reasoning", rep.MeasurementProtocol)
		require.Len(t, srv.Traces(), 62, "2 warm-up + 60 measured requests")

		traces := tracesByIndex(t, srv, seed)
		require.Len(t, traces, 60)
		plan, err := newPlan(Workload{Requests: 60, Seed: seed, MaxTokens: 1024}, 262144, defaultMargin, "")
		require.NoError(t, err)
		require.Equal(t, plan.ContextDistribution(), rep.ContextDistribution, "the seeded plan, whatever the scheduling")
		var ratios []float64
		for i, row := range rep.RequestTimings {
			require.Equal(t, i, row.RequestIndex)
			tr := traces[i]
			require.Equal(t, client.MS(tr.FirstReasoning), row.TimeToFirstOutputMS, "request %d TTFO", i)
			require.Equal(t, client.MS(tr.FirstContent), row.TTFTMS, "request %d TTFT", i)
			require.Equal(t, client.MS(tr.Last), row.E2EMS, "request %d E2E", i)
			require.Equal(t, tr.CompletionTokens, *row.OutputTokens, "request %d completion tokens", i)
			require.Equal(t, tr.PromptTokens, *row.PromptTokens, "request %d prompt tokens", i)
			require.Equal(t, countChunks(tr, "content"), row.ContentChunks)
			require.Equal(t, countChunks(tr, "reasoning"), row.ReasoningChunks)
			require.Equal(t, artifact.SourceUsage, row.OutputTokenSource)
			require.True(t, row.RequestCanary.Passed)
			require.Equal(t, plan.Contexts[i], row.PlannedContextTokens)
			ratios = append(ratios, float64(tr.CachedTokens)/float64(tr.PromptTokens))
		}
		require.Equal(t, stats.Summarize(ratios).Mean, *rep.Metrics.PrefixCacheHitAvg, "prefix cache hits as the server counted them")
		require.Positive(t, *rep.Metrics.PrefixCacheHitAvg, "the shared prefix is cached")

		before := reportJSON(t, rep)
		require.NoError(t, rep.Recompute())
		require.Equal(t, before, reportJSON(t, rep), "Recompute leaves the report unchanged")
	})
}

// keysOf returns the sorted keys of a JSON object.
func keysOf(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &m))
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestReportKeySets: a report from Run writes every v1 key
// (capacity/PROTOCOL.md#artifact-keys) and anvil_go: the seed artifact's top-level and row key sets, and the full
// failure row with its response metadata.
func TestReportKeySets(t *testing.T) {
	seedRaw, err := os.ReadFile("../testdata/seed-capacity-v4-reasoning.json")
	require.NoError(t, err)
	var seed struct {
		RequestTimings []json.RawMessage `json:"request_timings"`
	}
	require.NoError(t, json.Unmarshal(seedRaw, &seed))

	synctest.Test(t, func(t *testing.T) {
		cfg := fakeserver.Fast()
		cfg.Faults.ByIndex = map[int]fakeserver.Fault{1: "omit_marker", 2: "http_503"}
		rep, err := runFake(t, cfg, Workload{Requests: 4, Concurrency: 1, RequestCanaries: true, Temperature: new(0.7)})
		require.NoError(t, err)
		var doc struct {
			RequestTimings []json.RawMessage `json:"request_timings"`
			Failures       []json.RawMessage `json:"failures"`
		}
		raw := []byte(reportJSON(t, rep))
		require.NoError(t, json.Unmarshal(raw, &doc))
		top := keysOf(t, raw)
		// The 41 v1 keys of the seed, plus the one extension object.
		require.Len(t, top, 42)
		require.Equal(t, "anvil_go", top[0])
		require.Equal(t, keysOf(t, seedRaw), top[1:])
		require.Equal(t, keysOf(t, seed.RequestTimings[0]), keysOf(t, doc.RequestTimings[0]))
		require.Len(t, doc.Failures, 2)

		failureKeys := []string{"elapsed_ms", "error_message", "error_message_truncated", "error_type", "failure_class", "http_status",
			"performance_eligible", "planned_context_tokens", "request_index", "response_metadata", "response_received", "response_timing"}
		// The canary check of a failed response travels in its timing row, not repeated beside it.
		require.Equal(t, failureKeys, keysOf(t, doc.Failures[0]), "canary failure")
		require.Equal(t, failureKeys, keysOf(t, doc.Failures[1]), "HTTP failure")
		var f struct {
			ResponseMetadata json.RawMessage `json:"response_metadata"`
		}
		require.NoError(t, json.Unmarshal(doc.Failures[0], &f))
		require.Equal(t, []string{"content_chunks", "finish_reasons", "output_token_source", "reasoning_chunks",
			"stream_terminal_observed", "usage", "visible_content_truncated"}, keysOf(t, f.ResponseMetadata))
		started := time.Unix(0, rep.StartedAtUnixNS).UTC()
		require.Equal(t, "benchmark-"+started.Format("20060102T150405Z"), rep.RunID)
		require.Equal(t, started.Truncate(time.Second).Format(time.RFC3339), rep.StartedAt)
		require.Equal(t, client.MS(time.Duration(rep.FinishedAtUnixNS-rep.StartedAtUnixNS)), rep.WallClockMS, "fake time: wall and monotonic agree")
	})
}

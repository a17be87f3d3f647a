package merge_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/merge"
)

const genCounter = "vllm:generation_tokens_total"

// counterAt is a counter series sampled at 0 and endMS, from first to last.
func counterAt(name string, endMS, first, last float64) artifact.MetricSeries {
	return artifact.MetricSeries{Name: name, Type: "counter", Labels: map[string]string{"engine": "0"}, SamplesPerPoint: 1,
		OffsetsMS: []float64{0, endMS}, Values: []float64{first, last}, Increase: new(last - first), Resets: new(0)}
}

// sampled gives each shard a server_metrics member of endpoint in which
// the server's generation-token counter (which counts every shard's
// tokens) stood at firsts[k] when shard k first sampled it and lasts[k]
// when it last did, with the shard's own check marked as a shard's.
func sampled(shards []*artifact.Report, endpoint string, firsts, lasts []float64) {
	for k, r := range shards {
		tokens, _ := r.CompletionTokens()
		tc := &artifact.TokenCheck{Counter: genCounter, ServerIncrease: lasts[k] - firsts[k], ClientTokens: tokens}
		tc.Allow(0, r.WallClockMS, 0, r.MaxTokens)
		tc.Judge(0)
		tc.ForShard(k, len(shards))
		r.AnvilGo.ServerMetrics = &artifact.ServerMetrics{Endpoint: endpoint, Engine: new("vllm"), IntervalMS: 1000, TimeoutMS: 250,
			Samples: 2, MaxPointsPerSeries: 240, Series: []artifact.MetricSeries{counterAt(genCounter, r.WallClockMS, firsts[k], lasts[k])},
			Checks: &artifact.ServerChecks{GenerationTokens: tc}}
	}
}

// TestMergeServerMetrics: shards that sampled one server keep their
// members under their index, and the merged member checks every shard's
// tokens against the counter's rise from the last shard's first sample
// (every warm-up done) to the latest last one: exact when nobody else used
// the server, a named mismatch when someone did; shards that sampled
// different endpoints have no merged member.
func TestMergeServerMetrics(t *testing.T) {
	single := runSingle(t)
	total, _ := single.rep.CompletionTokens()
	require.Positive(t, total)
	const ep = "http://vllm.internal:8000/metrics"
	T := float64(total)
	// Shard 2 primed last, after the others' warm-ups (10 tokens each);
	// shard 0 sampled last, after every phase.
	firsts := []float64{1000, 1010, 1020}
	lasts := []float64{1020 + T, 1020 + T - 7, 1020 + T - 9}

	shards := splitShards(t, single, 3)
	sampled(shards, ep, firsts, lasts)
	require.Equal(t, "shard", shards[1].AnvilGo.ServerMetrics.Checks.GenerationTokens.Verdict, "a shard's own check is no verdict")
	merged, err := merge.Shards(shardFiles(t, shards)...)
	require.NoError(t, err)
	m := merged.AnvilGo.ServerMetrics
	require.NotNil(t, m)
	require.Equal(t, ep, m.Endpoint)
	g := m.Checks.GenerationTokens
	require.Equal(t, []any{genCounter, T, total, 0.0, 0.0, "exact", (*string)(nil)}, tokenFacts(g),
		"all shards' tokens against the union's rise")
	for k, rec := range merged.AnvilGo.Shards.Artifacts {
		require.NotNil(t, rec.ServerMetrics, "shard %d keeps its member", k)
		require.Equal(t, lasts[k]-firsts[k], *rec.ServerMetrics.Series[0].Increase)
		require.Equal(t, "shard", rec.ServerMetrics.Checks.GenerationTokens.Verdict)
	}
	back := roundTrip(t, merged)
	got, want := back.AnvilGo.Shards.Artifacts[2].ServerMetrics.Series[0], merged.AnvilGo.Shards.Artifacts[2].ServerMetrics.Series[0]
	require.Equal(t, want.OffsetsMS, got.OffsetsMS, "a shard's member reads back")
	require.Equal(t, want.Values, got.Values)
	require.Equal(t, tokenFacts(g), tokenFacts(back.AnvilGo.ServerMetrics.Checks.GenerationTokens))

	busy := splitShards(t, single, 3)
	lastsBusy := []float64{lasts[0] + 500, lasts[1], lasts[2]}
	sampled(busy, ep, firsts, lastsBusy)
	merged, err = merge.Shards(shardFiles(t, busy)...)
	require.NoError(t, err)
	g = merged.AnvilGo.ServerMetrics.Checks.GenerationTokens
	require.Equal(t, "mismatch", g.Verdict)
	require.Equal(t, 500.0, g.Difference)
	require.Contains(t, *g.Reason, "another client was using the server")

	apart := splitShards(t, single, 3)
	sampled(apart, ep, firsts, lasts)
	apart[1].AnvilGo.ServerMetrics.Endpoint = "http://other-replica:8000/metrics"
	merged, err = merge.Shards(shardFiles(t, apart)...)
	require.NoError(t, err)
	require.Nil(t, merged.AnvilGo.ServerMetrics, "two endpoints: no one member")
	require.Equal(t, "http://other-replica:8000/metrics", merged.AnvilGo.Shards.Artifacts[1].ServerMetrics.Endpoint)
}

// tokenFacts are g's keys in order.
func tokenFacts(g *artifact.TokenCheck) []any {
	return []any{g.Counter, g.ServerIncrease, g.ClientTokens, g.Difference, g.Allowance, g.Verdict, g.Reason}
}

// roundTrip writes r and reads it back.
func roundTrip(t *testing.T, r *artifact.Report) *artifact.Report {
	t.Helper()
	back, err := artifact.Read(bytes.NewReader(written(t, r)))
	require.NoError(t, err)
	return back
}

// TestMergeAudit: the merge is suspect when any shard is, naming the
// shard in each reason; counts add up, the other measurements are the
// largest shard's; an unaudited shard is a reason.
func TestMergeAudit(t *testing.T) {
	single := runSingle(t)
	shards := splitShards(t, single, 3)
	quiet := func() *artifact.Audit {
		return &artifact.Audit{Verdict: "ok", Reasons: []string{}, SchedLatencyP99MS: new(0.05), SchedSamples: 300,
			WakeLagP50MS: new(0.2), WakeLagP99MS: new(1.5), WakeSamples: 200, CPUShare: new(0.3), GOMAXPROCS: 4}
	}
	shards[0].AnvilGo.Audit, shards[2].AnvilGo.Audit = quiet(), quiet()
	const reason = "scheduler latency: the client's wake-ups ran 16.8 ms late at the median (p99 41.9 ms): timings below ~17 ms resolution are not trustworthy"
	shards[1].AnvilGo.Audit = &artifact.Audit{Verdict: "suspect", Reasons: []string{reason},
		SchedLatencyP99MS: new(0.3), SchedSamples: 30, WakeLagP50MS: new(16.8), WakeLagP99MS: new(41.9), WakeSamples: 40,
		CPUShare: new(0.6), GOMAXPROCS: 2}
	merged, err := merge.Shards(shardFiles(t, shards)...)
	require.NoError(t, err)
	a := merged.AnvilGo.Audit
	require.Equal(t, "suspect", a.Verdict)
	require.Equal(t, []string{"shard 1: " + reason}, a.Reasons)
	require.Equal(t, 630, a.SchedSamples)
	require.Equal(t, 440, a.WakeSamples)
	require.Equal(t, 16.8, *a.WakeLagP50MS)
	require.Equal(t, 0.3, *a.SchedLatencyP99MS)
	require.Equal(t, 0.6, *a.CPUShare)
	require.Equal(t, 4, a.GOMAXPROCS)

	shards = splitShards(t, single, 3)
	for _, s := range shards {
		s.AnvilGo.Audit = quiet()
	}
	merged, err = merge.Shards(shardFiles(t, shards)...)
	require.NoError(t, err)
	require.Equal(t, "ok", merged.AnvilGo.Audit.Verdict)
	require.Equal(t, []string{}, merged.AnvilGo.Audit.Reasons)

	shards[2].AnvilGo.Audit = nil
	merged, err = merge.Shards(shardFiles(t, shards)...)
	require.NoError(t, err)
	require.Equal(t, "suspect", merged.AnvilGo.Audit.Verdict)
	require.Equal(t, []string{"shard 2: not audited (its artifact has no anvil_go.audit)"}, merged.AnvilGo.Audit.Reasons)
}

// TestMergeWorkload: shards of one replay carry its workload, without one
// shard's send lag; shards that describe two workloads do not merge.
func TestMergeWorkload(t *testing.T) {
	single := runSingle(t)
	workload := func(sha string, lag float64) *artifact.Workload {
		return &artifact.Workload{Kind: artifact.WorkloadTrace,
			Trace: &artifact.TraceWorkload{File: "conv.jsonl", Format: "jsonl", SHA256: sha, Bytes: 4096, Rows: 24,
				FirstLine: 1, LastLine: 24, SpeedUp: 1},
			SendLagMS: &artifact.SendLag{Requests: 8, P50: lag, P99: lag, Max: lag}}
	}
	shards := splitShards(t, single, 3)
	for k, s := range shards {
		s.AnvilGo.Workload = workload("ab12", float64(k)+0.5)
	}
	merged, err := merge.Shards(shardFiles(t, shards)...)
	require.NoError(t, err)
	w := merged.AnvilGo.Workload
	require.NotNil(t, w)
	require.Equal(t, "ab12", w.Trace.SHA256)
	require.Nil(t, w.SendLagMS, "the shards' send lag percentiles do not merge")

	shards[2].AnvilGo.Workload = workload("cd34", 0.5)
	_, err = merge.Shards(shardFiles(t, shards)...)
	require.ErrorIs(t, err, merge.ErrNotMergeable)
	require.ErrorContains(t, err, "two workloads: shard-0.json has anvil_go.workload ")
	require.ErrorContains(t, err, `"sha256":"cd34"`)
}

package capacity

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/merge"
	fakeserver "github.com/anvilbench/anvil/fake_server"
	"github.com/anvilbench/anvil/stats"
)

// BenchmarkShardQueue measures on the real clock, over loopback TCP, the
// queue time (sent - due) of an open loop whose cap binds, Poisson 40
// req/s with at most 4 in flight, 120 requests, against a fake of 16 slots
// serving each request in 80 ms (0.8 of the cap's capacity): once as one
// process and once as 3 shards in this process against one server,
// merged. It reports the p95 of each run's queue times and scheduled-clock
// TTFT (pooled over the iterations), the merged minus the single queue
// p95, and the merge's reconstructed peak in flight across the shards and
// requests sent over the cap.
func BenchmarkShardQueue(b *testing.B) {
	b.ReportAllocs()
	cfg, err := fakeserver.Slots(16, 80*time.Millisecond)
	require.NoError(b, err)
	w := Workload{Requests: 120, Concurrency: 4, Rate: 40, MaxTokens: 16, ContextTokens: 512}
	target := func(srv *fakeserver.Server) Target {
		return Target{BaseURL: srv.URL + "/v1", ClockDomainID: "bench-clock"}
	}
	var alone, sharded, aloneTTFT, shardedTTFT []float64
	peak, over := 0, 0
	for b.Loop() {
		w.Seed++
		srv := fakeserver.New(cfg)
		single, err := Run(b.Context(), target(srv), w)
		srv.Close()
		require.NoError(b, err)
		alone, aloneTTFT = append(alone, queues(b, single)...), append(aloneTTFT, scheduledTTFTs(single)...)

		srv = fakeserver.New(cfg)
		reps, errs := runShards(b, target(srv), w, 3, 2*time.Second)
		srv.Close()
		for k := range reps {
			require.NoError(b, errs[k], "shard %d", k)
		}
		merged, err := merge.Shards(shardArtifacts(b, reps)...)
		require.NoError(b, err)
		sharded, shardedTTFT = append(sharded, queues(b, merged)...), append(shardedTTFT, scheduledTTFTs(merged)...)
		peak, over = max(peak, merged.AnvilGo.Shards.InFlight.Peak), over+merged.AnvilGo.Shards.InFlight.OverCapRequests
	}
	for _, xs := range [][]float64{alone, sharded, aloneTTFT, shardedTTFT} {
		slices.Sort(xs)
	}
	one, three := stats.Percentile(alone, 95), stats.Percentile(sharded, 95)
	b.ReportMetric(one, "queue-p95-single-ms")
	b.ReportMetric(three, "queue-p95-merged-ms")
	b.ReportMetric(stats.Percentile(aloneTTFT, 95), "sched-ttft-p95-single-ms")
	b.ReportMetric(stats.Percentile(shardedTTFT, 95), "sched-ttft-p95-merged-ms")
	b.ReportMetric(three-one, "queue-p95-diff-ms")
	b.ReportMetric(float64(peak), "peak-in-flight")
	b.ReportMetric(float64(over)/float64(b.N), "over-cap-requests/op")
}

// queues is the queue_ms of every request of r that was sent.
func queues(tb testing.TB, r *artifact.Report) []float64 {
	var out []float64
	for _, d := range r.AnvilGo.Requests {
		if d.QueueMS != nil {
			out = append(out, *d.QueueMS)
		}
	}
	require.NotEmpty(tb, out)
	return out
}

// scheduledTTFTs is the scheduled_ttft_ms of every request of r that has
// one (the successful ones).
func scheduledTTFTs(r *artifact.Report) []float64 {
	var out []float64
	for _, d := range r.AnvilGo.Requests {
		if d.ScheduledTTFTMS != nil {
			out = append(out, *d.ScheduledTTFTMS)
		}
	}
	return out
}

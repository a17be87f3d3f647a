package capacity

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/merge"
	"github.com/anvilbench/anvil/stats"
)

// bindingOpenLoop is an open loop whose in-flight cap binds against a
// server that takes 150 ms a request: 40 req/s offer 6 in flight on
// average, the cap is 4.
func bindingOpenLoop() Workload {
	return Workload{Requests: 120, Concurrency: 4, Rate: 40, Seed: 5, MaxTokens: 16, ContextTokens: 512}
}

// shardArtifacts is the shards' reports as written, named shard-<k>.json.
func shardArtifacts(tb testing.TB, reps []*artifact.Report) []merge.Artifact {
	files := make([]merge.Artifact, len(reps))
	for k, rep := range reps {
		var buf bytes.Buffer
		_, err := rep.WriteTo(&buf)
		require.NoError(tb, err)
		files[k] = merge.Artifact{Name: fmt.Sprintf("shard-%d.json", k), Data: buf.Bytes()}
	}
	return files
}

// queueMS is each request's queue_ms by request index.
func queueMS(t *testing.T, r *artifact.Report) map[int]float64 {
	out := make(map[int]float64)
	for _, d := range r.AnvilGo.Requests {
		require.NotNil(t, d.QueueMS, "request %d was sent", d.RequestIndex)
		out[d.RequestIndex] = *d.QueueMS
	}
	return out
}

// p95 is the 95th percentile of the values of m.
func p95(m map[int]float64) float64 {
	xs := make([]float64, 0, len(m))
	for _, v := range m {
		xs = append(xs, v)
	}
	slices.Sort(xs)
	return stats.Percentile(xs, 95)
}

// TestShardsKeepTheScheduleWhenTheCapBinds: 3 shards of an open loop whose
// in-flight cap binds (Poisson 40 req/s, cap 4, 120 requests, a server of
// a fixed 150 ms) each keep the whole cap, so every request is sent no
// later than the single process sent it, and at its due time whenever the
// single process sent it then: the merged queue times are at most the
// single run's, request by request. The merge reconstructs how many were
// in flight across the shards, exactly what the server saw, and counts the
// requests sent over the cap.
func TestShardsKeepTheScheduleWhenTheCapBinds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := bindingOpenLoop()
		one := &sleepyStream{d: 150 * time.Millisecond}
		single, err := Run(t.Context(), clockedPipeTarget(t, one), w)
		require.NoError(t, err)
		require.EqualValues(t, 4, one.max.Load(), "the single process holds its cap")

		h := &sleepyStream{d: 150 * time.Millisecond}
		reps, errs := runShards(t, clockedPipeTarget(t, h), w, 3, time.Second)
		for k, rep := range reps {
			require.NoError(t, errs[k], "shard %d", k)
			require.Equal(t, 4, rep.Concurrency, "shard %d keeps the whole cap", k)
			require.Equal(t, 4, rep.AnvilGo.Arrival.MaxInFlight)
		}
		merged, err := merge.Shards(shardArtifacts(t, reps)...)
		require.NoError(t, err)
		require.Equal(t, 120, merged.Completed)
		require.Equal(t, single.Concurrency, merged.Concurrency)

		alone, shards := queueMS(t, single), queueMS(t, merged)
		queued := 0
		for i, q := range alone {
			require.LessOrEqual(t, shards[i], q, "request %d waited longer in a shard than alone", i)
			if q == 0 {
				require.Zero(t, shards[i], "request %d: the single process sent it when due", i)
			} else {
				queued++
			}
		}
		require.Greater(t, queued, 12, "the cap binds for the single process")
		require.Positive(t, p95(alone))
		require.LessOrEqual(t, p95(shards), p95(alone))

		f := merged.AnvilGo.Shards.InFlight
		require.NotNil(t, f)
		require.Equal(t, 4, f.Cap)
		require.EqualValues(t, h.max.Load(), f.Peak, "the server's own count of requests in flight")
		require.Greater(t, f.Peak, 4)
		require.Positive(t, f.OverCapRequests)
		require.Less(t, f.OverCapRequests, 120)
	})
}

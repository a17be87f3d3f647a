package capacity

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/merge"
	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// shardWorkload is the seeded open loop the shard tests split.
func shardWorkload() Workload {
	return Workload{Requests: 24, Concurrency: 8, Seed: 11, MaxTokens: 64, RequestCanaries: true,
		ContextTokens: 1024, Rate: 40, PromptCacheMode: promptCacheUnique}
}

// runShards runs n shards of w at once, in the calling bubble, against one
// server, all starting lead from now; it returns their reports and errors
// by shard index.
func runShards(t testing.TB, target Target, w Workload, n int, lead time.Duration) ([]*artifact.Report, []error) {
	at := time.Now().Add(lead)
	reps, errs := make([]*artifact.Report, n), make([]error, n)
	var wg sync.WaitGroup
	for k := range n {
		wg.Go(func() {
			sw := w
			sw.Shard = Shard{Index: k, Count: n, StartAt: at}
			reps[k], errs[k] = Run(t.Context(), target, sw)
		})
	}
	wg.Wait()
	return reps, errs
}

// TestShardsAreTheWholeRun: 1, 2, 3 and 8 shards of one seeded open loop,
// run at once against one server, send every planned request exactly once
// at its global offset from the common start (the whole run's offsets),
// each shard its requests i with i mod N = its index under the whole
// in-flight cap, with one plan fingerprint; their artifacts merge into the
// whole run's artifact.
func TestShardsAreTheWholeRun(t *testing.T) {
	for _, n := range []int{1, 2, 3, 8} {
		t.Run(fmt.Sprintf("shards=%d", n), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				target := func(srv *fakeserver.Server) Target {
					return Target{BaseURL: srv.URL + "/v1", HTTPClient: srv.Client(), ClockDomainID: "test-clock"}
				}
				whole := fakeserver.NewInMemory(fakeserver.Fast())
				defer whole.Close()
				w := shardWorkload()
				w.PromptCacheMode = promptCacheShared // the fake's prefix cache then serves every run alike
				single, err := Run(t.Context(), target(whole), w)
				require.NoError(t, err)

				srv := fakeserver.NewInMemory(fakeserver.Fast())
				defer srv.Close()
				const lead = 3 * time.Second
				at := time.Now().Add(lead)
				reps, errs := runShards(t, target(srv), w, n, lead)
				files := make([]merge.Artifact, n)
				for k, rep := range reps {
					require.NoError(t, errs[k], "shard %d", k)
					sh := rep.AnvilGo.Shard
					require.NotNil(t, sh)
					require.Equal(t, k, sh.Index)
					require.Equal(t, n, sh.Count)
					require.Equal(t, at.UnixNano(), sh.StartAtUnixNS)
					require.Equal(t, at.UnixNano(), rep.StartedAtUnixNS, "offsets are from the common start")
					require.Equal(t, reps[0].AnvilGo.Shard.PlanFingerprint, sh.PlanFingerprint, "one global plan")
					require.Equal(t, 8, rep.Concurrency, "every shard of an open loop keeps the cap")
					require.Equal(t, 8, rep.AnvilGo.Arrival.MaxInFlight)
					require.NotNil(t, rep.AnvilGo.ChunkTiming.Distribution, "the merge needs the gaps")
					for _, d := range rep.AnvilGo.Requests {
						require.Equal(t, k, d.RequestIndex%n, "shard %d measured request %d", k, d.RequestIndex)
					}
					var buf bytes.Buffer
					_, err := rep.WriteTo(&buf)
					require.NoError(t, err)
					files[k] = merge.Artifact{Name: fmt.Sprintf("shard-%d.json", k), Data: buf.Bytes()}
				}
				require.Equal(t, len(single.AnvilGo.Requests), len(srv.Traces()), "every planned request reached the server once")
				merged, err := merge.Shards(files...)
				require.NoError(t, err)
				// The server's counter counts every shard's tokens: a
				// shard's own check says so, the merge's is exact.
				for k, rep := range reps {
					g := rep.AnvilGo.ServerMetrics.Checks.GenerationTokens
					if n > 1 {
						require.Equal(t, "shard", g.Verdict, "shard %d: %v", k, g.Reason)
						require.Contains(t, *g.Reason, fmt.Sprintf("shard %d of %d: ", k, n))
					} else {
						require.Equal(t, "exact", g.Verdict, "one shard is the whole run")
					}
				}
				mg := merged.AnvilGo.ServerMetrics.Checks.GenerationTokens
				require.Equal(t, "exact", mg.Verdict, "%+v %v", mg, mg.Reason)
				require.Equal(t, single.AnvilGo.ServerMetrics.Checks.GenerationTokens.ServerIncrease, mg.ServerIncrease)
				// The audit reads this machine's real scheduler and GC, so
				// no verdict is asserted: the merge's is suspect exactly
				// when a shard's is, with each shard's reasons named.
				reasons := []string{}
				for k, rep := range reps {
					for _, r := range rep.AnvilGo.Audit.Reasons {
						reasons = append(reasons, fmt.Sprintf("shard %d: %s", k, r))
					}
				}
				want := "ok"
				if len(reasons) > 0 {
					want = "suspect"
				}
				require.Equal(t, want, merged.AnvilGo.Audit.Verdict)
				require.Equal(t, reasons, merged.AnvilGo.Audit.Reasons)

				type planned struct {
					Index, Context      int
					ScheduledMS, SentMS float64
				}
				plan := func(r *artifact.Report) []planned {
					var out []planned
					for _, d := range r.AnvilGo.Requests {
						out = append(out, planned{d.RequestIndex, d.PlannedPromptTokens, *d.ScheduledMS, *d.SentMS})
					}
					return out
				}
				if diff := cmp.Diff(plan(single), plan(merged)); diff != "" {
					t.Fatalf("requests (-whole run +merged shards):\n%s", diff)
				}
				require.Equal(t, single.ContextDistribution, merged.ContextDistribution)
				require.Equal(t, single.Concurrency, merged.Concurrency)
				require.Equal(t, single.AnvilGo.Arrival.OfferedRPS, merged.AnvilGo.Arrival.OfferedRPS)
				again := *merged
				require.NoError(t, again.Recompute())
				require.Equal(t, merged.Metrics, again.Metrics, "the merged metrics are Recompute's")

				// Against a deterministic server the merged artifact is
				// the whole run's, apart from when it ran, what only a
				// merge holds and the documented loss of
				// prefix_cache_hit_avg; connections and their phases are
				// the transport's (one client pool for every shard here).
				got, wx := *merged, *merged.AnvilGo
				got.AnvilGo = &wx
				ct := *wx.ChunkTiming
				ct.Distribution = nil
				wx.ChunkTiming, wx.Shards, wx.Connections = &ct, nil, single.AnvilGo.Connections
				got.RunID, got.StartedAt, got.StartedAtUnixNS = single.RunID, single.StartedAt, single.StartedAtUnixNS
				got.FinishedAt, got.FinishedAtUnixNS = single.FinishedAt, single.FinishedAtUnixNS
				got.Metrics.PrefixCacheHitAvg = single.Metrics.PrefixCacheHitAvg
				// The audits and the samples are each process's own
				// (checked above).
				wx.Audit, wx.ServerMetrics = single.AnvilGo.Audit, single.AnvilGo.ServerMetrics
				if diff := cmp.Diff(withoutPhases(t, single), withoutPhases(t, &got)); diff != "" {
					t.Fatalf("artifact (-whole run +merged shards):\n%s", diff)
				}
			})
		})
	}
}

// withoutPhases is r as written, without anvil_go.requests[].phases.
func withoutPhases(t *testing.T, r *artifact.Report) string {
	c, x := *r, *r.AnvilGo
	c.AnvilGo = &x
	x.Requests = slices.Clone(x.Requests)
	for i := range x.Requests {
		x.Requests[i].Phases = nil
	}
	var buf bytes.Buffer
	_, err := c.WriteTo(&buf)
	require.NoError(t, err)
	return buf.String()
}

// TestShardPromptsAreTheWholeRunsPrompts: a shard sends exactly the bytes
// the whole run sends for the same request index, unique-mode prefix
// included (its nonce comes from the common start, which every shard
// shares).
func TestShardPromptsAreTheWholeRunsPrompts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fakeserver.NewInMemory(fakeserver.Fast())
		defer srv.Close()
		target := Target{BaseURL: srv.URL + "/v1", HTTPClient: srv.Client(), ClockDomainID: "test-clock"}
		reps, errs := runShards(t, target, shardWorkload(), 3, time.Second)
		prompts := map[string]int{}
		for k := range reps {
			require.NoError(t, errs[k])
		}
		for _, tr := range srv.Traces() {
			prompts[tr.Marker]++
		}
		require.Len(t, prompts, 24, "24 distinct requests, each once")
		for m, c := range prompts {
			require.Equal(t, 1, c, m)
		}
		w := shardWorkload()
		w.Shard = Shard{Count: 3, StartAt: time.Now()}
		require.Equal(t, shardNonce(w.Shard, w.Seed), shardNonce(Shard{Index: 2, Count: 3, StartAt: w.Shard.StartAt}, w.Seed))
		require.NotEqual(t, shardNonce(w.Shard, w.Seed), shardNonce(Shard{Count: 3, StartAt: w.Shard.StartAt.Add(time.Second)}, w.Seed))
	})
}

// TestShardClosedLoopSplitsTheWorkers: a closed loop of concurrency 5 over
// 2 shards runs 3 workers on shard 0 and 2 on shard 1, each over its own
// requests.
func TestShardClosedLoopSplitsTheWorkers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for k, want := range []int{3, 2} {
			h := &sleepyStream{d: 10 * time.Millisecond}
			w := Workload{Requests: 20, Concurrency: 5, ContextTokens: 512,
				Shard: Shard{Index: k, Count: 2, StartAt: time.Now().Add(time.Second)}}
			rep, err := Run(t.Context(), clockedPipeTarget(t, h), w)
			require.NoError(t, err)
			require.EqualValues(t, want, h.max.Load(), "shard %d: workers in flight", k)
			require.EqualValues(t, 10, h.seen.Load())
			require.Equal(t, 10, rep.Requests)
			require.Equal(t, want, rep.Concurrency)
			for _, row := range rep.RequestTimings {
				require.Equal(t, k, row.RequestIndex%2)
			}
		}
	})
}

// TestShardWaitsForTheStart: the measured phase starts at StartAt exactly,
// however long the shard was ready before it; nothing is sent before.
func TestShardWaitsForTheStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &arrivalLog{}
		at := time.Now().Add(90 * time.Second)
		w := Workload{Requests: 4, Concurrency: 2, ContextTokens: 512, Rate: 10, Arrival: arrivalConstant,
			Shard: Shard{Index: 1, Count: 2, StartAt: at}}
		rep, err := Run(t.Context(), clockedPipeTarget(t, h), w)
		require.NoError(t, err)
		require.Equal(t, at.UnixNano(), rep.StartedAtUnixNS)
		// Shard 1 of 2 owns requests 1 and 3, due at 100 ms and 300 ms.
		require.Equal(t, []time.Duration{100 * time.Millisecond, 300 * time.Millisecond}, h.offsets(at))
	})
}

// TestShardLate: a shard ready after StartAt sends nothing and fails
// naming how late it was; its report is still returned, every request of
// its share never sent, the reason in run.stop_reason, and the merge
// refuses it as late.
func TestShardLate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &arrivalLog{}
		at := time.Now().Add(-1500 * time.Millisecond)
		w := Workload{Requests: 6, Concurrency: 3, ContextTokens: 512, Rate: 10,
			Shard: Shard{Index: 0, Count: 3, StartAt: at}}
		rep, err := Run(t.Context(), clockedPipeTarget(t, h), w)
		require.ErrorIs(t, err, ErrShardLate)
		require.ErrorContains(t, err, "shard 0 of 3 was ready 1.5s after Workload.Shard.StartAt")
		require.NotNil(t, rep)
		require.Empty(t, h.offsets(at), "a late shard sends nothing")
		require.Equal(t, 2, rep.Requests)
		require.Equal(t, 2, rep.Failed)
		require.False(t, rep.PerformanceEligible)
		require.True(t, rep.AnvilGo.Run.Interrupted)
		require.Contains(t, *rep.AnvilGo.Run.StopReason, "1.5s after")
		require.Equal(t, at.Add(1500*time.Millisecond).UnixNano(), rep.StartedAtUnixNS)

		var buf bytes.Buffer
		_, err = rep.WriteTo(&buf)
		require.NoError(t, err)
		_, err = merge.Shards(merge.Artifact{Name: "late.json", Data: buf.Bytes()})
		require.ErrorIs(t, err, merge.ErrNotMergeable)
		require.ErrorContains(t, err, "started late: 1.5s after the common start")
	})
}

// clockedPipeTarget is pipeTarget on a declared clock domain, as a shard
// needs.
func clockedPipeTarget(t *testing.T, h http.Handler) Target {
	target := pipeTarget(t, h)
	target.ClockDomainID = "test-clock"
	return target
}

// TestShardNeedsAClockDomain: a shard without Target.ClockDomainID fails
// before it sends anything, naming the field.
func TestShardNeedsAClockDomain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &arrivalLog{}
		_, err := Run(t.Context(), pipeTarget(t, h), Workload{Requests: 4, Concurrency: 2, ContextTokens: 512,
			Shard: Shard{Count: 2, StartAt: time.Now().Add(time.Second)}})
		require.ErrorIs(t, err, ErrInvalidConfig)
		require.ErrorContains(t, err, "Target.ClockDomainID")
		require.Empty(t, h.offsets(time.Now()))
	})
}

// TestShardValidation: every bad shard names its field and range.
func TestShardValidation(t *testing.T) {
	at := time.Date(2027, 3, 4, 5, 6, 7, 0, time.UTC)
	for _, tc := range []struct {
		shard Shard
		edit  func(*Workload)
		want  string
	}{
		{Shard{Index: 1}, nil, "Workload.Shard.Index = 1: must be 0 without Workload.Shard.Count"},
		{Shard{StartAt: at}, nil, `Workload.Shard.StartAt = "2027-03-04T05:06:07Z": must be zero without Workload.Shard.Count`},
		{Shard{Count: 3, StartAt: at}, func(w *Workload) { w.Concurrency = 2 }, "Workload.Shard.Count = 3: must be at most Workload.Concurrency, 2, in a closed loop: every shard runs at least one worker (run the workloads of Concurrency >= 3, or fewer shards)"},
		{Shard{Count: 3, StartAt: at}, func(w *Workload) { w.Requests = 2 }, "Workload.Shard.Count = 3: must be at most Workload.Requests, 2: every shard sends at least one request"},
		{Shard{Count: maxShards + 1, StartAt: at}, func(w *Workload) { w.Concurrency, w.Requests = maxConcurrency, maxRequests }, fmt.Sprintf("must be in 0..%d", maxShards)},
		{Shard{Index: 3, Count: 3, StartAt: at}, nil, "Workload.Shard.Index = 3: must be in 0..2"},
		{Shard{Index: -1, Count: 3, StartAt: at}, nil, "Workload.Shard.Index = -1: must be in 0..2"},
		{Shard{Count: 3}, nil, `Workload.Shard.StartAt = "zero": must be set with Workload.Shard.Count`},
		{Shard{Count: 3, StartAt: at}, func(w *Workload) { w.Schedule = closedLoop() }, "Workload.Schedule = \"set\": must be nil with Workload.Shard"},
		{Shard{Count: 3, StartAt: at}, func(w *Workload) {
			w.Source = SourceFunc(func(context.Context, int) (Request, error) { return Request{}, nil })
		}, "Workload.Source = \"set\": must be nil with Workload.Shard"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			w := Workload{Shard: tc.shard}
			if tc.edit != nil {
				tc.edit(&w)
			}
			_, err := w.Resolved()
			require.ErrorIs(t, err, ErrInvalidConfig)
			require.ErrorContains(t, err, tc.want)
		})
	}
	_, err := Workload{Concurrency: 3, Shard: Shard{Index: 2, Count: 3, StartAt: at}}.Resolved()
	require.NoError(t, err)
	// An open loop's shards each keep the whole cap: more shards than it.
	_, err = Workload{Concurrency: 4, Rate: 40, Shard: Shard{Index: 7, Count: 8, StartAt: at}}.Resolved()
	require.NoError(t, err)
}

// TestShareOf: the shares add up to the concurrency, the first
// concurrency mod count shards one more.
func TestShareOf(t *testing.T) {
	for _, tc := range []struct{ concurrency, count int }{{5, 2}, {20, 3}, {8, 8}, {9, 8}, {1000, 7}} {
		var shares []int
		sum := 0
		for k := range tc.count {
			s := shareOf(tc.concurrency, k, tc.count)
			shares, sum = append(shares, s), sum+s
		}
		require.Equal(t, tc.concurrency, sum, "%v", shares)
		require.True(t, slices.IsSortedFunc(shares, func(a, b int) int { return b - a }), "%v", shares)
		require.LessOrEqual(t, shares[0]-shares[len(shares)-1], 1, "%v", shares)
	}
	require.Equal(t, 7, shareOf(7, 0, 0), "no shard count: the whole run")
	require.Zero(t, shareOf(7, 3, 3), "no such shard")
}

// TestShareOfTwentyOverThree splits a workload of concurrency 20 over 3
// load generators.
func TestShareOfTwentyOverThree(t *testing.T) {
	var got []string
	for k := range 3 {
		got = append(got, fmt.Sprintf("shard %d: %d workers, requests %d, %d, ...", k, shareOf(20, k, 3), k, k+3))
	}
	require.Equal(t, []string{
		"shard 0: 7 workers, requests 0, 3, ...",
		"shard 1: 7 workers, requests 1, 4, ...",
		"shard 2: 6 workers, requests 2, 5, ...",
	}, got)
}

package merge_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/itl"
	"github.com/anvilbench/anvil/capacity/internal/steady"
	"github.com/anvilbench/anvil/capacity/merge"
	"github.com/anvilbench/anvil/capacity/servermetrics"
	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// update rewrites the shard corpus (shardCorpus) from a fresh run.
var update = flag.Bool("update", false, "rewrite the shard artifacts under ../../testdata/shards")

// clockDomain is the clock domain the shards of these tests share.
const clockDomain = "test-host-clock"

// singleRun is one single-process open-loop run against the fake, under
// fake time, with the server's trace of every measured request.
type singleRun struct {
	rep    *artifact.Report
	traces map[int]fakeserver.Trace
}

// runSingle runs 24 seeded open-loop requests against the fake, which
// stalls now and then so the chunk timing has a tail.
func runSingle(t *testing.T) singleRun {
	t.Helper()
	var out singleRun
	synctest.Test(t, func(t *testing.T) {
		cfg := fakeserver.Fast()
		cfg.StallEvery, cfg.StallFor, cfg.TokensPerChunk = 5, 200*time.Millisecond, 2
		srv := fakeserver.NewInMemory(cfg)
		defer srv.Close()
		const seed = 11
		rep, err := capacity.Run(t.Context(),
			capacity.Target{BaseURL: srv.URL + "/v1", HTTPClient: srv.Client(), ClockDomainID: clockDomain,
				MetricsURL: servermetrics.Off}, // the split shards carry none (TestMergeServerMetrics merges them)
			capacity.Workload{Requests: 24, Concurrency: 5, Seed: seed, MaxTokens: 64, RequestCanaries: true,
				ContextTokens: 1024, Rate: 40})
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, 24, rep.Completed, "failures: %+v", rep.Failures)
		rep.AnvilGo.Audit = nil // the split shards carry none (TestMergeAudit merges them): compared without it
		out.rep = rep
		out.traces = tracesByIndex(t, srv, seed)
	})
	return out
}

// tracesByIndex maps the measured requests' traces by request index.
func tracesByIndex(t *testing.T, srv *fakeserver.Server, seed int64) map[int]fakeserver.Trace {
	prefix := "ANVIL_REQ_" + strconv.FormatInt(seed, 10) + "_"
	out := make(map[int]fakeserver.Trace)
	for _, tr := range srv.Traces() {
		if !strings.HasPrefix(tr.Marker, prefix) {
			continue // a warm-up request
		}
		i, err := strconv.Atoi(strings.TrimPrefix(tr.Marker, prefix))
		require.NoError(t, err)
		out[i] = tr
	}
	return out
}

// chunkRun records the streams of the given requests as one process's
// itl.Run, from the server's write offsets (which fake time makes the
// client's stamps exactly).
func chunkRun(t *testing.T, traces map[int]fakeserver.Trace, indexes []int) *itl.Run {
	run, err := itl.NewRun(itl.DefaultStallRule())
	require.NoError(t, err)
	for _, i := range indexes {
		tr := traces[i]
		var s itl.Stream
		for _, c := range tr.Chunks {
			if c.Kind == "reasoning" || c.Kind == "content" {
				s.Add(c.Written)
			}
		}
		tokens := tr.CompletionTokens
		_, err := run.Record(&s, &tokens)
		require.NoError(t, err)
	}
	return run
}

// share is the k-th of n as-even-as-possible parts of total.
func share(total, n, k int) int {
	s := total / n
	if k < total%n {
		s++
	}
	return s
}

// splitShards cuts the single run into n shard artifacts as n shard
// processes would write them: the requests whose index is k mod n, their
// whole in-flight cap, their share of the connections, their own chunk timing and
// metrics, all started at the single run's start on one clock domain. A
// shard k with lateNS[k] ran lateNS[k] later: its start, end and every
// request on the shared clock, its offsets from its own start unchanged
// (a shard schedules its requests from its own start).
func splitShards(t *testing.T, s singleRun, n int, lateNS ...int64) []*artifact.Report {
	t.Helper()
	orig := s.rep
	var out []*artifact.Report
	for k := range n {
		late := int64(0)
		if k < len(lateNS) {
			late = lateNS[k]
		}
		mine := func(i int) bool { return i%n == k }
		r := *orig // the v1 fields are the run's; the measured ones are replaced
		r.AnvilGo = nil
		r.Concurrency = orig.Concurrency // an open loop's shards each keep the whole cap
		r.StartedAtUnixNS += late
		r.FinishedAtUnixNS += late - int64(k) // shard 0 ends last, at the run's end
		r.WallClockMS = float64(r.FinishedAtUnixNS-r.StartedAtUnixNS) / 1e6
		r.RequestTimings, r.Failures, r.ContextDistribution = nil, []artifact.Failure{}, map[int]int{}
		r.ResponsesReceived, r.Requests = 0, 0
		var indexes []int
		for _, row := range orig.RequestTimings {
			if mine(row.RequestIndex) {
				r.RequestTimings = append(r.RequestTimings, row)
				indexes = append(indexes, row.RequestIndex)
				r.ResponsesReceived++
			}
		}
		r.Completed, r.Failed = len(r.RequestTimings), 0
		ps := *orig.AnvilGo.PromptSizing // the run's sizing; the plan check counts the shard's own requests
		ps.CountedRequests = 0
		o := orig.AnvilGo.Run // each shard is built as the single process was
		x := &artifact.Extension{Version: 1,
			Run: &artifact.RunSummary{API: o.API, AbsentTimings: o.AbsentTimings, ModuleVersion: o.ModuleVersion, VCSRevision: o.VCSRevision,
				VCSModified: o.VCSModified, GoVersion: o.GoVersion},
			PromptSizing:  &ps,
			ContextWindow: orig.AnvilGo.ContextWindow,
			Connections:   &artifact.Connections{Prewarmed: share(orig.AnvilGo.Connections.Prewarmed, n, k)},
			Shard: &artifact.Shard{Index: k, Count: n, StartAtUnixNS: orig.StartedAtUnixNS, Host: fmt.Sprintf("load-%d", k),
				ClockDomainID: new(clockDomain), PlanFingerprint: "sha256:" + strings.Repeat("5e", 32)},
		}
		for _, d := range orig.AnvilGo.Requests {
			if !mine(d.RequestIndex) {
				continue
			}
			r.Requests++
			r.ContextDistribution[d.PlannedPromptTokens]++
			if d.SentMS != nil {
				x.Run.SentRequests++
			}
			if d.CountedPromptTokens != nil {
				ps.CountedRequests++
			}
			if d.Phases != nil && !d.Phases.Reused {
				x.Connections.DialedInMeasurement++
			}
			x.Requests = append(x.Requests, d)
		}
		if a := orig.AnvilGo.Arrival; a != nil {
			x.Arrival = &artifact.Arrival{Process: a.Process, RateRPS: a.RateRPS, Burstiness: a.Burstiness, Seed: a.Seed,
				MaxInFlight: a.MaxInFlight}
		}
		run := chunkRun(t, s.traces, indexes)
		if ct, ok := run.Result(); ok {
			x.ChunkTiming = &artifact.ChunkTiming{
				ITLMS: artifact.Quantiles{P50: ct.ITL.P50, P90: ct.ITL.P90, P99: ct.ITL.P99, P999: ct.ITL.P999, Max: ct.ITL.Max},
				Gaps:  ct.Gaps, Exact: ct.Exact, RelativeError: ct.RelativeError, Stalls: ct.Stalls,
				StallRule:          artifact.StallRule{Relative: ct.StallRule.Relative, FloorMS: ct.StallRule.FloorMS, OverrideMS: ct.StallRule.OverrideMS},
				TokensPerChunkMean: ct.TokensPerChunkMean,
			}
			x.ChunkTiming.Distribution = run.Distribution()
		}
		r.AnvilGo = x
		if st := orig.AnvilGo.Steady; st != nil {
			x.Steady = steady.OfReport(&r, st.Load) // each shard tests its own requests
		}
		require.NoError(t, r.Recompute())
		out = append(out, &r)
	}
	return out
}

// written is the artifact bytes of r.
func written(t *testing.T, r *artifact.Report) []byte {
	t.Helper()
	var buf bytes.Buffer
	_, err := r.WriteTo(&buf)
	require.NoError(t, err)
	return buf.Bytes()
}

// shardFiles writes the shards as ShardArtifacts named shard-<k>.json.
func shardFiles(t *testing.T, shards []*artifact.Report) []merge.Artifact {
	out := make([]merge.Artifact, len(shards))
	for k, r := range shards {
		out[k] = merge.Artifact{Name: fmt.Sprintf("shard-%d.json", k), Data: written(t, r)}
	}
	return out
}

// TestMergeEqualsSingleProcess: N shards cut from one single-process run
// merge back into that run's artifact, byte for byte, apart from what a
// merge adds (anvil_go.shards, the merged gap distribution): the same rows
// and failures, every v1 metric bit for bit, the same wall clock,
// throughput, arrival rates and requests[] offsets, and the chunk timing of
// the single process.
func TestMergeEqualsSingleProcess(t *testing.T) {
	single := runSingle(t)
	require.NotNil(t, single.rep.AnvilGo.ChunkTiming)
	require.Positive(t, single.rep.AnvilGo.ChunkTiming.Stalls, "the fake stalled")
	for _, n := range []int{1, 2, 3, 8} {
		t.Run(fmt.Sprintf("shards=%d", n), func(t *testing.T) {
			files := shardFiles(t, splitShards(t, single, n))
			if n == 3 && *update {
				writeShardCorpus(t, single.rep, files)
			}
			// Any order.
			files[0], files[n-1] = files[n-1], files[0]
			merged, err := merge.Shards(files...)
			require.NoError(t, err)

			want := *single.rep
			wx := *want.AnvilGo
			want.AnvilGo = &wx
			ct := *wx.ChunkTiming
			ct.Distribution = chunkRun(t, single.traces, allIndexes(single.rep)).Distribution()
			wx.ChunkTiming = &ct
			if n > 1 {
				want.Metrics.PrefixCacheHitAvg = nil // not mergeable: documented
			}
			wx.Shards = &artifact.ShardSet{Count: n, StartAtUnixNS: want.StartedAtUnixNS, PlanFingerprint: "sha256:" + strings.Repeat("5e", 32)}
			byName := map[string][]byte{}
			for _, f := range files {
				byName[f.Name] = f.Data
			}
			for k := range n {
				wx.Shards.Artifacts = append(wx.Shards.Artifacts, artifact.ShardRecord{Index: k, Host: fmt.Sprintf("load-%d", k),
					StartedAtUnixNS: want.StartedAtUnixNS, FinishedAtUnixNS: want.FinishedAtUnixNS - int64(k),
					SHA256: sha256Of(byName[fmt.Sprintf("shard-%d.json", k)])})
			}
			// One process never exceeds its cap: the reconstruction finds
			// the single run's in-flight count (TestInFlightOf checks it
			// on a timeline of its own).
			got := merged.AnvilGo.Shards.InFlight
			require.NotNil(t, got, "an open loop")
			require.Equal(t, 5, got.Cap)
			require.Zero(t, got.OverCapRequests)
			require.True(t, got.Peak >= 1 && got.Peak <= 5, "peak %d", got.Peak)
			wx.Shards.InFlight = &artifact.ShardInFlight{Cap: 5, Peak: got.Peak}
			require.NoError(t, want.Recompute())
			if diff := cmp.Diff(string(written(t, &want)), string(written(t, merged))); diff != "" {
				t.Fatalf("merged artifact (-single process +merged):\n%s", diff)
			}
			// The v1 metrics are Recompute's of the merged rows.
			again := *merged
			require.NoError(t, again.Recompute())
			require.Equal(t, string(written(t, merged)), string(written(t, &again)))
		})
	}
}

// TestMergeRebasesLateStarts: shards that started a little after the
// common start (within the tolerance) have their offsets re-based onto it,
// each shard's later by its lateness up to float rounding, and the wall
// clock runs from the earliest shard start to the latest end.
func TestMergeRebasesLateStarts(t *testing.T) {
	single := runSingle(t)
	late := []int64{int64(3 * time.Millisecond), 0, int64(40 * time.Millisecond)}
	merged, err := merge.Shards(shardFiles(t, splitShards(t, single, 3, late...))...)
	require.NoError(t, err)
	require.Equal(t, single.rep.StartedAtUnixNS+late[1], merged.StartedAtUnixNS, "the earliest shard start")
	require.Equal(t, single.rep.FinishedAtUnixNS+late[2]-2, merged.FinishedAtUnixNS, "the latest shard end")
	require.Len(t, merged.AnvilGo.Requests, len(single.rep.AnvilGo.Requests))
	for i, want := range single.rep.AnvilGo.Requests {
		got := merged.AnvilGo.Requests[i]
		require.Equal(t, want.RequestIndex, got.RequestIndex)
		shift := float64(late[want.RequestIndex%3]) / 1e6
		require.InDelta(t, *want.ScheduledMS+shift, *got.ScheduledMS, 1e-9, "request %d scheduled_ms", i)
		require.InDelta(t, *want.SentMS+shift, *got.SentMS, 1e-9, "request %d sent_ms", i)
		require.InDelta(t, *want.EndMS+shift, *got.EndMS, 1e-9, "request %d end_ms", i)
		require.Equal(t, *want.QueueMS, *got.QueueMS, "differences are not re-based")
	}
}

func allIndexes(r *artifact.Report) []int {
	var ix []int
	for _, row := range r.RequestTimings {
		ix = append(ix, row.RequestIndex)
	}
	return ix
}

// TestMergeDropsUnmergeableChunkTiming: a shard whose chunk timing has no
// stored distribution cannot have its percentiles merged, so the merged
// artifact has no chunk_timing rather than a wrong one; the rest merges.
func TestMergeDropsUnmergeableChunkTiming(t *testing.T) {
	single := runSingle(t)
	shards := splitShards(t, single, 2)
	shards[1].AnvilGo.ChunkTiming.Distribution = nil
	merged, err := merge.Shards(shardFiles(t, shards)...)
	require.NoError(t, err)
	require.Nil(t, merged.AnvilGo.ChunkTiming)
	require.Equal(t, single.rep.Metrics.TTFT, merged.Metrics.TTFT)
}

// shardCorpus is where -update writes a single-process run and the three
// shards cut from it, for the anvilreport tests of merged artifacts.
const shardCorpus = "../../testdata/shards"

func writeShardCorpus(t *testing.T, single *artifact.Report, files []merge.Artifact) {
	require.NoError(t, os.MkdirAll(shardCorpus, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(shardCorpus, "single.json"), written(t, single), 0o644))
	for _, f := range files {
		require.NoError(t, os.WriteFile(filepath.Join(shardCorpus, f.Name), f.Data, 0o644))
	}
}

// TestMergeSketchedChunkTiming: shards whose gaps spilled into the sketch
// (or whose total does) merge into the chunk timing one process given
// every stream reports, bit for bit, sketch error stated.
func TestMergeSketchedChunkTiming(t *testing.T) {
	single := runSingle(t)
	shards := splitShards(t, single, 3)
	all, err := itl.NewRun(itl.DefaultStallRule())
	require.NoError(t, err)
	stalls := 0
	for k, sh := range shards {
		run, err := itl.NewRun(itl.DefaultStallRule())
		require.NoError(t, err)
		// Shard k: streams of 1,000 gaps of (k+1) x (0.5..20 ms), 30 of
		// them (exact alone) for shards 0 and 1, 70 (sketched) for 2.
		streams := 30
		if k == 2 {
			streams = 70
		}
		for s := range streams {
			var st itl.Stream
			at := time.Duration(0)
			for g := range 1001 {
				at += time.Duration(k+1) * (500*time.Microsecond + time.Duration((g*7919+s*104729)%19500)*time.Microsecond)
				st.Add(at)
			}
			for _, r := range []*itl.Run{run, all} {
				sum, err := r.Record(&st, nil)
				require.NoError(t, err)
				if r == run {
					stalls += sum.Stalls
				}
			}
		}
		ct, ok := run.Result()
		require.True(t, ok)
		require.Equal(t, k == 2, !ct.Exact)
		sh.AnvilGo.ChunkTiming.Gaps, sh.AnvilGo.ChunkTiming.Stalls = ct.Gaps, ct.Stalls
		sh.AnvilGo.ChunkTiming.Distribution = run.Distribution()
	}
	merged, err := merge.Shards(shardFiles(t, shards)...)
	require.NoError(t, err)
	want, _ := all.Result()
	require.False(t, want.Exact, "130,000 gaps are sketched")
	got := merged.AnvilGo.ChunkTiming
	require.Equal(t, artifact.Quantiles{P50: want.ITL.P50, P90: want.ITL.P90, P99: want.ITL.P99, P999: want.ITL.P999, Max: want.ITL.Max},
		artifact.Quantiles{P50: got.ITLMS.P50, P90: got.ITLMS.P90, P99: got.ITLMS.P99, P999: got.ITLMS.P999, Max: got.ITLMS.Max})
	require.Equal(t, want.Gaps, got.Gaps)
	require.False(t, got.Exact)
	require.Equal(t, itl.RelativeAccuracy, got.RelativeError)
	require.Equal(t, stalls, got.Stalls)
	require.NotNil(t, got.Distribution)
	require.Contains(t, string(written(t, merged)), `"sketch": {`, "the merged gaps stay sketched")
}

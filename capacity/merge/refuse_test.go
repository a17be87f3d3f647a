package merge_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/merge"
)

func sha256Of(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// TestMergeRefuses: every way a set of artifacts is not each shard of one
// workload exactly once, on one declared clock, is refused with a message
// naming the problem.
func TestMergeRefuses(t *testing.T) {
	single := runSingle(t)
	fresh := func() []*artifact.Report { return splitShards(t, single, 3) }
	for _, tt := range []struct {
		name   string
		shards func() []*artifact.Report
		want   string
	}{
		{"missing shard", func() []*artifact.Report { s := fresh(); return []*artifact.Report{s[0], s[2]} },
			"shard 1 of 3 is missing (have 0 (shard-0.json), 2 (shard-1.json))"},
		{"missing last shard", func() []*artifact.Report { return fresh()[:2] }, "shard 2 of 3 is missing"},
		{"duplicate shard", func() []*artifact.Report { s := fresh(); return append(s, s[1]) },
			"duplicate shard 1 of 3: shard-1.json and shard-3.json"},
		{"two workloads", func() []*artifact.Report { s := fresh(); s[2].Model = "other-model"; return s },
			`two workloads: shard-0.json has model fake-fast, shard-2.json has other-model`},
		{"two extra bodies", func() []*artifact.Report {
			s := fresh()
			s[1].AnvilGo.Run.ExtraBody = map[string]string{"cache_prompt": "false"}
			return s
		}, "two workloads: shard-0.json has anvil_go.run.extra_body null, shard-1.json has map[cache_prompt:false]"},
		{"two APIs", func() []*artifact.Report {
			s := fresh()
			s[2].AnvilGo.Run.API = new("responses")
			return s
		}, "two workloads: shard-0.json has anvil_go.run.api chat, shard-2.json has responses"},
		{"two plans", func() []*artifact.Report {
			s := fresh()
			s[1].AnvilGo.Shard.PlanFingerprint = "sha256:" + s[1].AnvilGo.Shard.PlanFingerprint[9:] + "00"
			return s
		}, "two workloads: shard-0.json has anvil_go.shard.plan_fingerprint"},
		{"two shard counts", func() []*artifact.Report { s := fresh(); s[1].AnvilGo.Shard.Count = 4; return s },
			"two shard counts: shard-0.json has anvil_go.shard.count 3, shard-1.json has 4"},
		{"null clock domain", func() []*artifact.Report { s := fresh(); s[2].ClockDomainID = nil; return s },
			"shard-2.json (shard 2): clock_domain_id is null: independent artifacts are aligned only on an operator-supplied clock domain"},
		{"differing clock domain", func() []*artifact.Report {
			s := fresh()
			s[1].ClockDomainID, s[1].AnvilGo.Shard.ClockDomainID = new("other-clock"), new("other-clock")
			return s
		}, `differing clock_domain_id: shard-0.json has clock_domain_id "test-host-clock", shard-1.json has "other-clock"`},
		{"shard clock domain not the artifact's", func() []*artifact.Report {
			s := fresh()
			s[1].AnvilGo.Shard.ClockDomainID = nil
			return s
		}, `shard-1.json (shard 1): anvil_go.shard.clock_domain_id null differs from clock_domain_id "test-host-clock"`},
		{"late shard", func() []*artifact.Report {
			s := fresh()
			s[2].StartedAtUnixNS += int64(250 * time.Millisecond)
			return s
		}, "shard-2.json (shard 2) started late: 250ms after the common start"},
		{"early shard", func() []*artifact.Report {
			s := fresh()
			s[0].StartedAtUnixNS -= int64(time.Second)
			return s
		}, "shard-0.json (shard 0) started early: 1s before the common start"},
		{"start beyond int64 differences", func() []*artifact.Report {
			s := fresh()
			s[0].StartedAtUnixNS, s[0].AnvilGo.Shard.StartAtUnixNS = math.MinInt64, math.MaxInt64
			for _, r := range s[1:] {
				r.AnvilGo.Shard.StartAtUnixNS = math.MaxInt64
			}
			return s
		}, "shard-0.json (shard 0) started early: 18446744074s before the common start"},
		{"request index twice", func() []*artifact.Report {
			s := fresh()
			s[1].RequestTimings = append(s[1].RequestTimings, s[0].RequestTimings[0])
			require.NoError(t, s[1].Recompute(), "its metrics are its rows'")
			return s
		}, "request index 0 twice in request_timings/failures: shard-0.json and shard-1.json"},
		{"metrics the rows contradict", func() []*artifact.Report {
			s := fresh()
			s[2].RequestTimings[0].E2EMS += 5000
			return s
		}, "shard-2.json: the stored metrics contradict the request rows: metrics.e2e_"},
		{"not a shard", func() []*artifact.Report { s := fresh(); s[1].AnvilGo.Shard = nil; return s },
			"shard-1.json is not a shard artifact (it has no anvil_go.shard)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := merge.Shards(shardFiles(t, tt.shards())...)
			require.ErrorIs(t, err, merge.ErrNotMergeable)
			require.ErrorContains(t, err, tt.want)
		})
	}
	_, err := merge.Shards()
	require.ErrorIs(t, err, merge.ErrNotMergeable)
}

// FuzzMerge: whatever one shard's bytes are, Shards returns an error or an
// artifact that writes, reads back and recomputes to itself; it never
// panics.
func FuzzMerge(f *testing.F) {
	var shards [3][]byte
	for i := range shards {
		data, err := os.ReadFile(filepath.Join(shardCorpus, fmt.Sprintf("shard-%d.json", i)))
		require.NoError(f, err)
		shards[i] = data
	}
	f.Add(shards[1])
	f.Add(bytes.Replace(shards[1], []byte(`"index": 1`), []byte(`"index": 0`), 1))
	f.Add(bytes.Replace(shards[1], []byte(`"started_at_unix_ns": `), []byte(`"started_at_unix_ns": -`), 1))
	f.Fuzz(func(t *testing.T, one []byte) {
		merged, err := merge.Shards(
			merge.Artifact{Name: "shard-0.json", Data: shards[0]},
			merge.Artifact{Name: "fuzzed.json", Data: one},
			merge.Artifact{Name: "shard-2.json", Data: shards[2]})
		if err != nil {
			return
		}
		data := written(t, merged)
		back, err := artifact.Read(bytes.NewReader(data))
		require.NoError(t, err)
		require.NoError(t, back.Recompute())
		require.Equal(t, string(data), string(written(t, back)))
	})
}

// TestMergeStartTolerance: a shard that started exactly the tolerance of
// capacity/PROTOCOL.md#merging-shards (100 ms) after (or before) the common
// start merges; one nanosecond more is refused.
func TestMergeStartTolerance(t *testing.T) {
	const tolerance = 100 * time.Millisecond
	single := runSingle(t)
	for _, tt := range []struct {
		off time.Duration
		ok  bool
	}{
		{tolerance, true}, {tolerance + 1, false},
		{-tolerance, true}, {-tolerance - 1, false},
	} {
		s := splitShards(t, single, 2)
		s[1].StartedAtUnixNS += int64(tt.off)
		_, err := merge.Shards(shardFiles(t, s)...)
		if tt.ok {
			require.NoError(t, err, "%v", tt.off)
		} else {
			require.ErrorIs(t, err, merge.ErrNotMergeable, "%v", tt.off)
		}
	}
}

// TestMergeRefusesBadDistribution: a shard whose stored gaps no run could
// have kept, or that contradict its own chunk_timing, fails the merge
// naming the shard and the member.
func TestMergeRefusesBadDistribution(t *testing.T) {
	single := runSingle(t)
	for _, tt := range []struct {
		name string
		edit func(d *artifact.ChunkTiming)
		want string
	}{
		{"unsorted", func(c *artifact.ChunkTiming) {
			ns := c.Distribution.ExactNS
			ns[0], ns[len(ns)-1] = ns[len(ns)-1], ns[0]
		}, `shard-1.json: anvil_go.chunk_timing.distribution: exact_ns = "unsorted": must be in ascending order`},
		{"gap count", func(c *artifact.ChunkTiming) { c.Gaps++ },
			"shard-1.json: anvil_go.chunk_timing.distribution: holds 89 gaps, chunk_timing.gaps says 90"},
		{"another accuracy", func(c *artifact.ChunkTiming) {
			c.Distribution = &artifact.GapDistribution{Sketch: &artifact.GapSketch{RelativeAccuracy: 0.02, Count: 70000, Bins: map[int]int{0: 70000}}}
		}, "shard-1.json: anvil_go.chunk_timing.distribution: sketch.relative_accuracy = 0.02: must be 0.01"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := splitShards(t, single, 3)
			tt.edit(s[1].AnvilGo.ChunkTiming)
			_, err := merge.Shards(shardFiles(t, s)...)
			require.ErrorContains(t, err, "merge: "+tt.want)
		})
	}
}

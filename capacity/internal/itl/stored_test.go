package itl

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/field"
)

// TestDistributionRoundTrip: the streams of one run recorded by N runs,
// each stored as a distribution and added to one fresh Run, give the
// distribution of the single run bit for bit, on the exact path and on the
// sketched one (and across it: exact parts whose total is sketched).
func TestDistributionRoundTrip(t *testing.T) {
	for i, tt := range []struct {
		name   string
		gaps   int
		shards int
	}{
		{"exact", 20000, 3},
		{"exact parts, sketched total", ExactGaps + 5000, 2},
		{"sketched parts", 3*ExactGaps + 77, 2},
		{"one part", 7000, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			streams := split(randomGaps(uint64(40+i), tt.gaps), 500)
			all := recordAll(t, streams)
			want, _ := all.Result()

			merged, err := NewRun(DefaultStallRule())
			require.NoError(t, err)
			for s := range tt.shards {
				var part [][]time.Duration
				for j := s; j < len(streams); j += tt.shards {
					part = append(part, streams[j])
				}
				d := recordAll(t, part).Distribution()
				require.Equal(t, len(d.ExactNS) == 0, d.Sketch != nil)
				require.NoError(t, merged.AddDistribution(d))
			}
			got, _ := merged.Result()
			// Stalls and tokens per chunk are the streams', not the gaps'.
			want.Stalls, want.TokensPerChunkMean = 0, nil
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("merged from stored gaps (-single +merged):\n%s", diff)
			}
			if diff := cmp.Diff(all.Distribution(), merged.Distribution(), cmpopts.IgnoreUnexported(artifact.GapDistribution{}, artifact.GapSketch{})); diff != "" {
				t.Fatalf("stored distribution (-single +merged):\n%s", diff)
			}
		})
	}
}

// TestDistributionThroughArtifact: a sketched distribution written in an
// artifact reads back to the same buckets, and a run rebuilt from it
// reports the original run's percentiles bit for bit.
func TestDistributionThroughArtifact(t *testing.T) {
	run := recordAll(t, split(randomGaps(8, ExactGaps+4321), 1000))
	want, ok := run.Result()
	require.True(t, ok)
	require.False(t, want.Exact)
	d := run.Distribution()
	require.NotNil(t, d.Sketch)
	require.Nil(t, d.ExactNS)

	var buf bytes.Buffer
	_, err := (&artifact.Report{Schema: artifact.Schema, RequestTimings: []artifact.TimingRow{}, Failures: []artifact.Failure{},
		AnvilGo: &artifact.Extension{Version: 1, ChunkTiming: &artifact.ChunkTiming{Gaps: want.Gaps, Distribution: d}}}).WriteTo(&buf)
	require.NoError(t, err)
	back, err := artifact.Read(&buf)
	require.NoError(t, err)
	got := back.AnvilGo.ChunkTiming.Distribution
	require.Empty(t, cmp.Diff(d, got, cmpopts.IgnoreUnexported(artifact.GapDistribution{}, artifact.GapSketch{})))

	rebuilt, err := NewRun(DefaultStallRule())
	require.NoError(t, err)
	require.NoError(t, rebuilt.AddDistribution(got))
	res, _ := rebuilt.Result()
	require.Equal(t, want.ITL, res.ITL)
	require.Equal(t, want.Gaps, res.Gaps)
}

// TestAddDistributionRefusesImpossible: distributions no Run could hold
// are refused, naming the member, and leave the run unchanged.
func TestAddDistributionRefusesImpossible(t *testing.T) {
	stored := recordAll(t, split(randomGaps(7, ExactGaps+10), 1000)).Distribution()
	require.NotNil(t, stored.Sketch)
	s := *stored.Sketch
	withBins := func(edit func(map[int]int)) *artifact.GapSketch {
		c := s
		c.Bins = make(map[int]int)
		for i, n := range s.Bins {
			c.Bins[i] = n
		}
		edit(c.Bins)
		return &c
	}
	top := 0
	for i := range s.Bins {
		top = max(top, i)
	}
	for _, tt := range []struct {
		name  string
		d     artifact.GapDistribution
		field string
	}{
		{"too many exact", artifact.GapDistribution{ExactNS: make([]int64, ExactGaps+1)}, "exact_ns"},
		{"negative", artifact.GapDistribution{ExactNS: []int64{-1, 2}}, "exact_ns[0]"},
		{"unsorted", artifact.GapDistribution{ExactNS: []int64{3, 2}}, "exact_ns"},
		{"both", artifact.GapDistribution{ExactNS: []int64{1}, Sketch: &s}, "exact_ns"},
		{"other accuracy", artifact.GapDistribution{Sketch: &artifact.GapSketch{RelativeAccuracy: 0.02, Count: s.Count, MaxNS: s.MaxNS, Zero: s.Zero, Bins: s.Bins}}, "sketch.relative_accuracy"},
		{"small sketch", artifact.GapDistribution{Sketch: &artifact.GapSketch{RelativeAccuracy: RelativeAccuracy, Count: 3, Bins: map[int]int{1: 3}}}, "sketch.count"},
		{"counts off", artifact.GapDistribution{Sketch: &artifact.GapSketch{RelativeAccuracy: RelativeAccuracy, Count: s.Count + 1, MaxNS: s.MaxNS, Zero: s.Zero, Bins: s.Bins}}, "sketch.bins"},
		{"empty bucket", artifact.GapDistribution{Sketch: withBins(func(b map[int]int) { b[top+1] = 0 })}, fmt.Sprintf("sketch.bins[%d]", top+1)},
		{"max outside", artifact.GapDistribution{Sketch: &artifact.GapSketch{RelativeAccuracy: RelativeAccuracy, Count: s.Count, MaxNS: s.MaxNS * 3, Zero: s.Zero, Bins: s.Bins}}, "sketch.max_ns"},
		// A bucket no duration reaches (which would also cost memory).
		{"bucket below 1 ns", artifact.GapDistribution{Sketch: withBins(func(b map[int]int) { b[-1<<30] = 1 })}, "sketch.bins"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			run := recordAll(t, [][]time.Duration{{time.Millisecond, 2 * time.Millisecond}})
			err := run.AddDistribution(&tt.d)
			var ie *field.Error
			require.ErrorAs(t, err, &ie)
			require.Equal(t, tt.field, ie.Field)
			require.Equal(t, []int64{1e6, 2e6}, run.Distribution().ExactNS, "unchanged")
		})
	}
}

package itl

import (
	"testing"
	"time"

	"github.com/anvilbench/anvil/capacity/internal/field"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// TestGapsRoundTrip: the streams of one run recorded by N runs, each
// stored as Gaps and added to one fresh Run, give the distribution of the
// single run bit for bit, on the exact path and on the sketched one (and
// across it: exact parts whose total is sketched).
func TestGapsRoundTrip(t *testing.T) {
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
			want, _ := recordAll(t, streams).Result()

			merged, err := NewRun(DefaultStallRule())
			require.NoError(t, err)
			for s := range tt.shards {
				var part [][]time.Duration
				for j := s; j < len(streams); j += tt.shards {
					part = append(part, streams[j])
				}
				g := recordAll(t, part).Gaps()
				require.Equal(t, g.Count() > ExactGaps, g.Sketch != nil)
				require.NoError(t, merged.AddGaps(g))
			}
			got, _ := merged.Result()
			// Stalls and tokens per chunk are the streams', not the gaps'.
			want.Stalls, want.TokensPerChunkMean = 0, nil
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("merged from stored gaps (-single +merged):\n%s", diff)
			}
		})
	}
}

// TestAddGapsRefusesImpossible: Gaps no Run could hold are refused, naming
// the field, and leave the run unchanged.
func TestAddGapsRefusesImpossible(t *testing.T) {
	sketched := recordAll(t, split(randomGaps(7, ExactGaps+10), 1000)).Gaps()
	require.NotNil(t, sketched.Sketch)
	s := *sketched.Sketch
	for _, tt := range []struct {
		name  string
		gaps  Gaps
		field string
	}{
		{"too many exact", Gaps{Exact: make([]time.Duration, ExactGaps+1)}, "Gaps.Exact"},
		{"negative", Gaps{Exact: []time.Duration{-1, 2}}, "Gaps.Exact[0]"},
		{"unsorted", Gaps{Exact: []time.Duration{3, 2}}, "Gaps.Exact"},
		{"both", Gaps{Exact: []time.Duration{1}, Sketch: &s}, "Gaps.Exact"},
		{"small sketch", Gaps{Sketch: &SketchedGaps{Count: 3, Bins: []Bin{{Index: 1, Count: 3}}}}, "Gaps.Sketch.Count"},
		{"counts off", Gaps{Sketch: &SketchedGaps{Count: s.Count + 1, Max: s.Max, Zero: s.Zero, Bins: s.Bins}}, "Gaps.Sketch.Bins"},
		{"max outside", Gaps{Sketch: &SketchedGaps{Count: s.Count, Max: s.Max * 3, Zero: s.Zero, Bins: s.Bins}}, "Gaps.Sketch.Max"},
		// A bucket no duration reaches (which would also cost memory).
		{"bucket below 1 ns", Gaps{Sketch: &SketchedGaps{Count: s.Count, Max: s.Max, Zero: s.Zero,
			Bins: append([]Bin{{Index: -1 << 30, Count: 1}}, s.Bins...)}}, "Gaps.Sketch.Bins[0].Index"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			run := recordAll(t, [][]time.Duration{{time.Millisecond, 2 * time.Millisecond}})
			err := run.AddGaps(tt.gaps)
			var ie *field.Error
			require.ErrorAs(t, err, &ie)
			require.Equal(t, tt.field, ie.Field)
			require.Equal(t, 2, run.Gaps().Count(), "unchanged")
		})
	}
}

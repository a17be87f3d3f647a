package itl

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// coalescedGaps is randomGaps as a fast stream read in batches sees it:
// every event but the first of each batch of batch events shares its
// read's stamp, so its gap is 0.
func coalescedGaps(seed uint64, n, batch int) []time.Duration {
	gaps := randomGaps(seed, n)
	for i := range gaps {
		if i%batch != 0 {
			gaps[i] = 0
		}
	}
	return gaps
}

// TestZeroGapsKeptExactly: the zero gaps, counted apart from the others on
// the exact path, still count toward ExactGaps (a run of ExactGaps gaps is
// exact, one more is sketched, however many are 0), and the percentiles,
// the stalls and the stored distribution are those of every gap sorted.
func TestZeroGapsKeptExactly(t *testing.T) {
	for _, batch := range []int{1, 2, 40, ExactGaps + 1} {
		gaps := coalescedGaps(uint64(batch), ExactGaps+1, batch)
		exact := gaps[:ExactGaps]
		streams := split(exact, 20000)
		run := recordAll(t, streams)
		got, ok := run.Result()
		require.True(t, ok)
		require.True(t, got.Exact, "batch %d: ExactGaps gaps are kept exactly", batch)
		want := RunITL{P50: naiveRank(exact, 500), P90: naiveRank(exact, 900), P99: naiveRank(exact, 990),
			P999: naiveRank(exact, 999), Max: naiveRank(exact, 1000)}
		require.Equal(t, want, got.ITL, "batch %d", batch)
		stalls := 0 // each stream's own threshold, from its own median
		for _, s := range streams {
			n, _ := naiveStalls(s, DefaultStallRule())
			stalls += n
		}
		require.Equal(t, stalls, got.Stalls, "batch %d", batch)

		sorted := slices.Clone(exact)
		slices.Sort(sorted)
		ns := make([]int64, len(sorted))
		for i, d := range sorted {
			ns[i] = int64(d)
		}
		d := run.Distribution()
		require.Nil(t, d.Sketch)
		if diff := cmp.Diff(ns, d.ExactNS); diff != "" {
			t.Fatalf("batch %d: stored exact gaps (-every gap sorted +stored):\n%s", batch, diff)
		}

		spilled := recordAll(t, split(gaps, 20000))
		got, _ = spilled.Result()
		require.False(t, got.Exact, "batch %d: ExactGaps+1 gaps are sketched", batch)
		s := spilled.Distribution().Sketch
		require.NotNil(t, s)
		zeros := 0
		for _, g := range gaps {
			if g == 0 {
				zeros++
			}
		}
		require.Equal(t, ExactGaps+1, s.Count, "batch %d", batch)
		require.Equal(t, zeros, s.Zero, "batch %d: the zero gaps move into the sketch's zero count", batch)
		require.Equal(t, int64(slices.Max(gaps)), s.MaxNS, "batch %d", batch)
	}
}

// TestZeroGapsMerged: runs of coalesced streams merged, directly and
// through their stored distributions, give the run of all the streams,
// on either side of ExactGaps.
func TestZeroGapsMerged(t *testing.T) {
	for i, total := range []int{30000, ExactGaps, ExactGaps + 3000, 3*ExactGaps + 5} {
		streams := split(coalescedGaps(uint64(70+i), total, 40), 999)
		all := recordAll(t, streams)
		want, _ := all.Result()
		half := len(streams) / 2

		a, b := recordAll(t, streams[:half]), recordAll(t, streams[half:])
		require.NoError(t, a.Merge(b))
		got, _ := a.Result()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%d gaps: a.Merge(b) (-all +merged):\n%s", total, diff)
		}

		stored, err := NewRun(DefaultStallRule())
		require.NoError(t, err)
		for _, part := range [][][]time.Duration{streams[:half], streams[half:]} {
			require.NoError(t, stored.AddDistribution(recordAll(t, part).Distribution()))
		}
		if diff := cmp.Diff(all.Distribution(), stored.Distribution(), cmpopts.IgnoreUnexported(artifact.GapDistribution{}, artifact.GapSketch{})); diff != "" {
			t.Fatalf("%d gaps: stored distribution (-all +merged from stored):\n%s", total, diff)
		}
	}
}

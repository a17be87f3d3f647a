package artifact

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/itl"
)

// sketchedRun is a Run of more than itl.ExactGaps gaps, so it keeps a
// sketch, some of them 0.
func sketchedRun(t *testing.T, seed uint64) *itl.Run {
	run, err := itl.NewRun(itl.DefaultStallRule())
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(seed, 2))
	for range itl.ExactGaps/1000 + 3 {
		var s itl.Stream
		at := time.Duration(0)
		s.Add(at)
		for range 1000 {
			if rng.IntN(50) > 0 {
				at += time.Duration(rng.Int64N(int64(40 * time.Millisecond)))
			}
			s.Add(at)
		}
		_, err := run.Record(&s, nil)
		require.NoError(t, err)
	}
	return run
}

// TestGapDistributionSketchRoundTrip: a sketched distribution written in
// an artifact reads back to the same buckets, and a run rebuilt from it
// reports the original run's percentiles bit for bit.
func TestGapDistributionSketchRoundTrip(t *testing.T) {
	run := sketchedRun(t, 1)
	want, ok := run.Result()
	require.True(t, ok)
	require.False(t, want.Exact)
	r := syntheticReport()
	require.NoError(t, r.Recompute())
	r.AnvilGo = &Extension{Version: extensionVersion, ChunkTiming: &ChunkTiming{Gaps: want.Gaps, distribution: gapsOf(run)}}
	require.NotNil(t, r.AnvilGo.ChunkTiming.distribution.Sketch)
	require.Nil(t, r.AnvilGo.ChunkTiming.distribution.ExactNS)
	var buf bytes.Buffer
	require.NoError(t, write(&buf, r))
	back, err := Read(&buf)
	require.NoError(t, err)
	d := back.AnvilGo.ChunkTiming.distribution
	require.Empty(t, cmp.Diff(r.AnvilGo.ChunkTiming.distribution, d, cmp.AllowUnexported(shape{}),
		cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".shape" }, cmp.Ignore())))

	g, err := d.gaps()
	require.NoError(t, err)
	rebuilt, err := itl.NewRun(itl.DefaultStallRule())
	require.NoError(t, err)
	require.NoError(t, rebuilt.AddGaps(g))
	got, _ := rebuilt.Result()
	require.Equal(t, want.ITL, got.ITL)
	require.Equal(t, want.Gaps, got.Gaps)

	d.Sketch.RelativeAccuracy = 0.02
	_, err = d.gaps()
	require.ErrorContains(t, err, "sketch.relative_accuracy 0.02, want 0.01")
}

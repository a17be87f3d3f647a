package itl

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// randomGaps returns n gaps spread log-uniformly over 0.5 ms..200 ms, with
// about 1% zero gaps (events coalesced into one instant) and 0.2% stalls of
// 1..3 s, from a fixed seed.
func randomGaps(seed uint64, n int) []time.Duration {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([]time.Duration, n)
	for i := range out {
		switch u := rng.Float64(); {
		case u < 0.01:
			out[i] = 0
		case u < 0.012:
			out[i] = time.Second + time.Duration(rng.Int64N(int64(2*time.Second)))
		default:
			out[i] = time.Duration(0.5e6 * math.Exp(rng.Float64()*math.Log(400)))
		}
	}
	return out
}

// naiveRank is the nearest-rank percentile perMille/10 of gaps, in ms, by
// sorting a copy: the definition, written independently of gapSet.
func naiveRank(gaps []time.Duration, perMille int) float64 {
	sorted := slices.Clone(gaps)
	slices.Sort(sorted)
	r := int(math.Ceil(float64(perMille) * float64(len(sorted)) / 1000))
	if r < 1 {
		r = 1
	}
	return float64(sorted[r-1]) / 1e6
}

// requireWithin fails unless got is within RelativeAccuracy of want.
func requireWithin(t *testing.T, want, got float64, what string) {
	t.Helper()
	require.LessOrEqual(t, math.Abs(got-want), RelativeAccuracy*want, "%s: sketch %v, exact %v", what, got, want)
}

// recordAll records streams of the given gaps into a new Run.
func recordAll(t *testing.T, streams [][]time.Duration) *Run {
	t.Helper()
	run, err := NewRun(DefaultStallRule())
	require.NoError(t, err)
	var s Stream
	for _, gaps := range streams {
		fill(&s, gaps)
		_, err := run.Record(&s, nil)
		require.NoError(t, err)
	}
	return run
}

// split cuts gaps into streams of at most size gaps.
func split(gaps []time.Duration, size int) [][]time.Duration {
	var out [][]time.Duration
	for len(gaps) > 0 {
		n := min(size, len(gaps))
		out = append(out, gaps[:n])
		gaps = gaps[n:]
	}
	return out
}

func TestRunExactBound(t *testing.T) {
	gaps := randomGaps(1, ExactGaps+1)
	exact, _ := recordAll(t, split(gaps[:ExactGaps], 1000)).Result()
	require.True(t, exact.Exact, "ExactGaps gaps are kept exactly")
	require.Equal(t, 0.0, exact.RelativeError)
	require.Equal(t, naiveRank(gaps[:ExactGaps], 990), exact.ITL.P99)

	sketched, _ := recordAll(t, split(gaps, 1000)).Result()
	require.False(t, sketched.Exact, "one gap more moves to the sketch")
	require.Equal(t, RelativeAccuracy, sketched.RelativeError)
	require.Equal(t, ExactGaps+1, sketched.Gaps)
}

func TestRunSketchAccuracy(t *testing.T) {
	gaps := randomGaps(2, 3*ExactGaps+12345)
	got, ok := recordAll(t, split(gaps, 777)).Result()
	require.True(t, ok)
	require.False(t, got.Exact)
	requireWithin(t, naiveRank(gaps, 500), got.ITL.P50, "p50")
	requireWithin(t, naiveRank(gaps, 900), got.ITL.P90, "p90")
	requireWithin(t, naiveRank(gaps, 990), got.ITL.P99, "p99")
	requireWithin(t, naiveRank(gaps, 999), got.ITL.P999, "p99.9")
	require.Equal(t, float64(slices.Max(gaps))/1e6, got.ITL.Max, "max is exact")
	require.LessOrEqual(t, got.ITL.P999, got.ITL.Max)
}

func TestRunSketchZeroGaps(t *testing.T) {
	// 60% zero gaps: p50 must be exactly 0, read from the sketch's zero
	// count.
	gaps := concat(repeat(0, 3*ExactGaps/5*2), repeat(5*msec, 2*ExactGaps/5*2))
	got, _ := recordAll(t, split(gaps, 5000)).Result()
	require.False(t, got.Exact)
	require.Equal(t, 0.0, got.ITL.P50)
	requireWithin(t, 5, got.ITL.P90, "p90")
	require.Equal(t, 5.0, got.ITL.Max)
}

func TestRunMergeSketched(t *testing.T) {
	tests := []struct {
		name string
		gaps int // in streams of 1,000 gaps
		cut  int // streams in the first run
	}{
		{"both exact alone, sketched together", ExactGaps + 20000, 43},
		{"one stream and a sketched run", 2*ExactGaps + 999, 1},
		{"two sketched runs", 2*ExactGaps + 999, 66},
		{"sketched run and one stream", 2*ExactGaps + 999, 132},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			streams := split(randomGaps(uint64(10+i), tt.gaps), 1000)
			want, _ := recordAll(t, streams).Result()
			require.False(t, want.Exact)
			require.Less(t, tt.cut, len(streams))

			a, b := recordAll(t, streams[:tt.cut]), recordAll(t, streams[tt.cut:])
			require.NoError(t, a.Merge(b))
			got, _ := a.Result()
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("a.Merge(b) (-all +merged):\n%s", diff)
			}
			a, b = recordAll(t, streams[:tt.cut]), recordAll(t, streams[tt.cut:])
			require.NoError(t, b.Merge(a))
			got, _ = b.Result()
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("b.Merge(a) (-all +merged):\n%s", diff)
			}
		})
	}
}

func TestStreamSketched(t *testing.T) {
	// One very long stream: 8 ms gaps with jitter of ±1 ms, and 100
	// stalls of 300 ms; no gap near the 80 ms threshold, so the sketched
	// stall count is exact.
	rng := rand.New(rand.NewPCG(4, 4))
	gaps := make([]time.Duration, ExactGaps+5000)
	for i := range gaps {
		gaps[i] = 7*msec + time.Duration(rng.Int64N(int64(2*msec)))
	}
	for i := 0; i < 100; i++ {
		gaps[i*600+17] = 300 * msec
	}
	var s Stream
	fill(&s, gaps)
	got, err := s.Summary(DefaultStallRule(), new(2*(len(gaps)+1)))
	require.NoError(t, err)
	require.False(t, got.Exact)
	require.Equal(t, RelativeAccuracy, got.RelativeError)
	require.Equal(t, len(gaps), got.Gaps)
	require.Equal(t, len(gaps)+1, got.OutputChunks)
	require.Equal(t, 100, got.Stalls)
	require.Equal(t, new(2.0), got.TokensPerChunk)
	requireWithin(t, naiveRank(gaps, 500), got.ITL.P50, "p50")
	requireWithin(t, naiveRank(gaps, 900), got.ITL.P90, "p90")
	requireWithin(t, naiveRank(gaps, 990), got.ITL.P99, "p99")
	require.Equal(t, 300.0, got.ITL.Max)
	requireWithin(t, 10*got.ITL.P50, got.StallThresholdMS, "threshold")

	// Reset returns the stream to the exact path.
	fill(&s, []time.Duration{msec, 2 * msec})
	got, err = s.Summary(DefaultStallRule(), nil)
	require.NoError(t, err)
	require.True(t, got.Exact)
	require.Equal(t, &ITL{P50: 1, P90: 2, P99: 2, Max: 2}, got.ITL)

	// A sketched stream recorded into a run makes the run sketched.
	fill(&s, gaps)
	run, err := NewRun(DefaultStallRule())
	require.NoError(t, err)
	_, err = run.Record(&s, nil)
	require.NoError(t, err)
	res, _ := run.Result()
	require.False(t, res.Exact)
	require.Equal(t, 100, res.Stalls)
	requireWithin(t, naiveRank(gaps, 999), res.ITL.P999, "run p99.9")
}

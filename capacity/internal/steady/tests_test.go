package steady

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// TestMannKendall pins the statistic on hand-computed series.
func TestMannKendall(t *testing.T) {
	for _, tc := range []struct {
		name string
		y    []float64
		want float64
	}{
		// S = 10, Var S = 5*4*15/18: z = 9 / sqrt(16.67).
		{"rising", []float64{1, 2, 3, 4, 5}, 9 / math.Sqrt(50.0/3)},
		{"falling", []float64{5, 4, 3, 2, 1}, -9 / math.Sqrt(50.0/3)},
		// S = 2, one pair tied: Var S = (66 - 18) / 18.
		{"tied", []float64{1, 1, 2}, 1 / math.Sqrt(48.0/18)},
		{"constant", []float64{3, 3, 3, 3}, 0},
		{"flat", []float64{1, 3, 2, 3, 1, 2}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.InDelta(t, tc.want, mannKendall(tc.y), 1e-12)
		})
	}
}

// TestMSER: MSER cuts a transient at the start and nothing of a stationary
// series, and never more than half.
func TestMSER(t *testing.T) {
	step := []float64{9, 9, 9, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2}
	require.Equal(t, 3, mser(step))
	require.Equal(t, 0, mser([]float64{1, 2, 1, 2, 1, 2, 1, 2}))
	require.Equal(t, 0, mser([]float64{4, 4, 4, 4}))
	rising := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	require.Equal(t, 5, mser(rising), "a trend is cut as far as allowed")
	require.Equal(t, 0, mser(nil))
}

// TestSpread: intervals spread over the bins they cover, clipped to them.
func TestSpread(t *testing.T) {
	p := newSpread(4, 10)
	p.add(5, 35, 1)  // 5 + 10 + 10 + 5
	p.add(12, 18, 2) // 6 ms at weight 2
	p.add(-5, 3, 1)  // clipped to [0, 3)
	p.add(38, 90, 1) // clipped to [38, 40)
	require.Empty(t, cmp.Diff([]float64{8, 22, 10, 7}, p.total()))
}

// TestFindInput: the refusals that need no series, on Input directly.
func TestFindInput(t *testing.T) {
	w := Find(Input{PhaseMS: 1000, Load: InFlight, Concurrency: 1, Requests: []Request{{Sent: 0, End: 900}}})
	require.Equal(t, "no measured request succeeded", w.Reason)
	require.False(t, w.Found)

	var reqs []Request
	for i := range 30 {
		reqs = append(reqs, Request{At: float64(i) * 33, Sent: float64(i) * 33, End: float64(i)*33 + 33, OK: true, TTFT: 5})
	}
	w = Find(Input{PhaseMS: 1000, Load: InFlight, Concurrency: 1, Requests: reqs})
	require.Equal(t, 7, w.Bins, "at least 4 completions a bin: 30/4 bins")
	require.InDelta(t, 1000.0/7.5, w.BinMS, 1e-9)
	require.Equal(t, "too short: the phase holds 7 bins of 133.3 ms (4 completions each on average at least), the test needs 10", w.Reason)
	require.Nil(t, w.StartMS)
}

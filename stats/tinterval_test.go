package stats

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTInterval95 pins the interval on hand-computed samples: the t
// quantiles are the tables' (12.7062047, 4.3026527, 2.2621572).
func TestTInterval95(t *testing.T) {
	for _, tc := range []struct {
		name         string
		xs           []float64
		mean, halfAt float64 // halfAt: t · s / sqrt(n)
	}{
		// s = sqrt(2), n = 2: 12.7062047 * sqrt(2) / sqrt(2).
		{"two runs", []float64{1, 3}, 2, 12.706204736174707},
		// s = 1, n = 3.
		{"three runs", []float64{1, 2, 3}, 2, 4.302652729911275 / math.Sqrt(3)},
		// s = sqrt(55/6) for 1..10, n = 10.
		{"ten runs", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 5.5, 2.2621571627409915 * math.Sqrt(55.0/6) / math.Sqrt(10)},
		{"equal runs", []float64{0.9, 0.9, 0.9}, 0.9, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mean, lo, hi := TInterval95(tc.xs)
			require.Equal(t, tc.mean, mean)
			require.InDelta(t, tc.mean-tc.halfAt, lo, 1e-8)
			require.InDelta(t, tc.mean+tc.halfAt, hi, 1e-8)
		})
	}
	mean, lo, hi := TInterval95([]float64{7})
	require.Equal(t, 7.0, mean)
	require.True(t, math.IsNaN(lo) && math.IsNaN(hi), "one run has no interval")
	mean, _, _ = TInterval95(nil)
	require.True(t, math.IsNaN(mean))
}

// The attainment of an SLO over three repeated runs, with its 95%
// interval.
func ExampleTInterval95() {
	mean, lo, hi := TInterval95([]float64{0.93, 0.91, 0.95})
	fmt.Printf("%.3f [%.3f, %.3f]\n", mean, lo, hi)
	// Output: 0.930 [0.880, 0.980]
}

// TestTQuantile: the 0.975 quantiles against the closed forms (1 and 2
// degrees of freedom), the tables and, for a million, the expansion
// z + (z^3 + z) / (4 nu).
func TestTQuantile(t *testing.T) {
	for _, tc := range []struct{ nu, want float64 }{
		{1, math.Tan(math.Pi * 0.475)},       // Cauchy: tan(pi (p - 1/2))
		{2, 0.95 / math.Sqrt(2*0.975*0.025)}, // (2p-1) / sqrt(2p(1-p))
		{3, 3.182446305284263},
		{4, 2.776445105197799},
		{9, 2.262157162740991},
		{29, 2.045229642132703},
		{99, 1.984216951835213},
		{1e6, 1.959966357},
	} {
		require.InDelta(t, tc.want, tQuantile(0.975, tc.nu), 1e-9*tc.want, "nu = %v", tc.nu)
	}
}

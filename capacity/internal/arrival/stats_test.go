package arrival

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// The statistical tests draw MaxN = 10^6 intervals, not fewer: for gamma
// burstiness 0.25 (CV 2) the standard error of the mean interval over
// 10^5 draws is 0.63%, so a 1% tolerance would be only 1.6 standard
// errors. At 10^6 every tolerance below is at least 5 standard errors
// (the figures are in each case), so a change of seed keeps them passing
// while a sampler off by the tolerance fails.

// intervalStats returns the mean and the coefficient of variation of the
// intervals between consecutive offsets.
func intervalStats(t *testing.T, s Spec) (rate, cv float64) {
	t.Helper()
	offsets, err := Schedule(s, MaxN)
	require.NoError(t, err)
	var sum, sumSq float64
	for i := 1; i < len(offsets); i++ {
		x := float64(offsets[i] - offsets[i-1])
		sum += x
		sumSq += x * x
	}
	n := float64(len(offsets) - 1)
	mean := sum / n
	variance := max(0, (sumSq-sum*mean)/(n-1))
	return Offered(offsets), math.Sqrt(variance) / mean
}

func TestScheduleStatistics(t *testing.T) {
	tests := []struct {
		spec  Spec
		cv    float64 // expected CV of the intervals
		cvTol float64 // relative tolerance on the CV
		// Standard errors, for the record: of the mean CV/√n; of the
		// sample CV about CV·√((κ-1)/4n) for kurtosis κ = 3 + 6/b.
	}{
		{Spec{Process: Constant, Rate: 10}, 0, 0},                             // CV must be < 1e-9
		{Spec{Process: Poisson, Rate: 10, Seed: 11}, 1, 0.02},                 // mean 0.1%, CV 0.14%
		{Spec{Process: Gamma, Rate: 10, Burstiness: 0.25, Seed: 12}, 2, 0.03}, // mean 0.2%, CV 0.25%
		{Spec{Process: Gamma, Rate: 10, Burstiness: 0.5, Seed: 13}, math.Sqrt2, 0.03},
		{Spec{Process: Gamma, Rate: 10, Burstiness: 2, Seed: 14}, 1 / math.Sqrt2, 0.03},
		{Spec{Process: Gamma, Rate: 10, Burstiness: 4, Seed: 15}, 0.5, 0.03}, // mean 0.05%, CV 0.07%
		{Spec{Process: Gamma, Rate: 10, Burstiness: 100, Seed: 16}, 0.1, 0.03},
		{Spec{Process: Gamma, Rate: MaxRate, Burstiness: 0.25, Seed: 17}, 2, 0.03}, // 1 µs mean: ns rounding
	}
	for _, tt := range tests {
		name := fmt.Sprintf("%s/rate=%g/b=%g", tt.spec.Process, tt.spec.Rate, tt.spec.Burstiness)
		t.Run(name, func(t *testing.T) {
			rate, cv := intervalStats(t, tt.spec)
			t.Logf("%+v: rate %.6g, CV %.6g", tt.spec, rate, cv)
			require.InEpsilon(t, tt.spec.Rate, rate, 0.01, "mean rate")
			if tt.cv == 0 {
				require.Less(t, cv, 1e-9, "CV of constant intervals")
				return
			}
			require.InEpsilon(t, tt.cv, cv, tt.cvTol, "CV of the intervals")
		})
	}
}

// ksStatistic returns √n · sup |F_n(x) - F(x)|, the Kolmogorov–Smirnov
// statistic of the sample against the CDF F. Under the null hypothesis it
// exceeds 1.95 with probability 0.001.
func ksStatistic(sample []float64, cdf func(float64) float64) float64 {
	slices.Sort(sample)
	n := float64(len(sample))
	d := 0.0
	for i, x := range sample {
		f := cdf(x)
		d = max(d, float64(i+1)/n-f, f-float64(i)/n)
	}
	return math.Sqrt(n) * d
}

// TestSamplerDistributions checks the whole distribution of the
// exponential and normal samplers, not only their moments.
func TestSamplerDistributions(t *testing.T) {
	r := NewRand(5)
	const n = 200_000
	exp := make([]float64, n)
	norm := make([]float64, n)
	for i := range n {
		exp[i] = PoissonProcess{}.Interval(r)
		norm[i] = normal(r)
	}
	ksExp := ksStatistic(exp, func(x float64) float64 { return 1 - math.Exp(-x) })
	ksNorm := ksStatistic(norm, func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) })
	t.Logf("KS statistics: exponential %.3f, normal %.3f", ksExp, ksNorm)
	require.Less(t, ksExp, 1.95, "exponential sampler")
	require.Less(t, ksNorm, 1.95, "normal sampler")
}

// TestGammaMoments checks the first three moments of Gamma(b, 1/b) draws:
// mean 1, variance 1/b and skewness 2/√b, across the boost (b < 1) and the
// direct branch.
func TestGammaMoments(t *testing.T) {
	for _, b := range []float64{0.1, 0.25, 0.9, 1.5, 4, 30} {
		r := NewRand(int64(b * 1000))
		g := GammaProcess{Burstiness: b}
		const n = 1_000_000
		xs := make([]float64, n)
		var sum float64
		for i := range xs {
			xs[i] = g.Interval(r)
			if !(xs[i] >= 0) {
				t.Fatalf("b=%g: draw %d = %v", b, i, xs[i])
			}
			sum += xs[i]
		}
		mean := sum / n
		var m2, m3 float64
		for _, x := range xs {
			d := x - mean
			m2 += d * d
			m3 += d * d * d
		}
		m2 /= n
		m3 /= n
		skew := m3 / math.Pow(m2, 1.5)
		t.Logf("b=%g: mean %.5f variance %.5f (want %.5f) skewness %.4f (want %.4f)", b, mean, m2, 1/b, skew, 2/math.Sqrt(b))
		// Standard errors: mean √(1/(bn)), at most 0.32% at b = 0.1.
		require.InDelta(t, 1, mean, 0.015, "b=%g mean", b)
		require.InEpsilon(t, 1/b, m2, 0.04, "b=%g variance", b)
		require.InEpsilon(t, 2/math.Sqrt(b), skew, 0.10, "b=%g skewness", b)
	}
}

func TestGammaInvalidBurstiness(t *testing.T) {
	r := NewRand(1)
	for _, b := range []float64{0, -1, math.NaN(), math.Inf(1), math.Inf(-1)} {
		require.True(t, math.IsNaN(GammaProcess{Burstiness: b}.Interval(r)), "burstiness %v", b)
	}
}

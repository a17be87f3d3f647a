package stats

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

func nanSummary(n int) Summary {
	nan := math.NaN()
	return Summary{N: n, Mean: nan, Stddev: nan, CI95Low: nan, CI95High: nan,
		Min: nan, P25: nan, P50: nan, P75: nan, P90: nan, P95: nan, P99: nan, Max: nan}
}

func TestSummarizeSmall(t *testing.T) {
	one := nanSummary(1)
	one.Mean, one.Min, one.Max = 7.5, 7.5, 7.5
	one.P25, one.P50, one.P75, one.P90, one.P95, one.P99 = 7.5, 7.5, 7.5, 7.5, 7.5, 7.5

	sqrt2 := math.Sqrt(2)
	two := Summary{N: 2, Mean: 2, Stddev: sqrt2,
		CI95Low: 2 - (1.96*sqrt2)/sqrt2, CI95High: 2 + (1.96*sqrt2)/sqrt2,
		Min: 1, P25: 1, P50: 1, P75: 3, P90: 3, P95: 3, P99: 3, Max: 3}

	tests := []struct {
		name string
		xs   []float64
		want Summary
	}{
		{"empty", nil, nanSummary(0)},
		{"one", []float64{7.5}, one},
		{"two", []float64{3, 1}, two},
		{"constant", []float64{4, 4, 4}, Summary{N: 3, Mean: 4, Stddev: 0, CI95Low: 4, CI95High: 4,
			Min: 4, P25: 4, P50: 4, P75: 4, P90: 4, P95: 4, P99: 4, Max: 4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Summarize(tc.xs)
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(sameFloat)); diff != "" {
				t.Errorf("Summarize(%v) mismatch (-want +got):\n%s", tc.xs, diff)
			}
		})
	}
}

// sameFloat is bit equality, NaN equal to NaN.
func sameFloat(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

func TestNearestRank(t *testing.T) {
	// 1..100: the p-th percentile is p itself.
	xs := make([]float64, 100)
	for i := range xs {
		xs[i] = float64(100 - i)
	}
	s := Summarize(xs)
	require.Equal(t, []float64{25, 50, 75, 90, 95, 99}, []float64{s.P25, s.P50, s.P75, s.P90, s.P95, s.P99})
	// n = 6: ranks ceil(1.5)=2, 3, ceil(4.5)=5, ceil(5.4)=6, 6, 6.
	s = Summarize([]float64{10, 20, 30, 40, 50, 60})
	require.Equal(t, []float64{20, 30, 50, 60, 60, 60}, []float64{s.P25, s.P50, s.P75, s.P90, s.P95, s.P99})
	// n = 3: p25 rank ceil(0.75) = 1.
	require.Equal(t, 1.0, Percentile([]float64{1, 2, 3}, 25))
	require.Equal(t, 3.0, Percentile([]float64{1, 2, 3}, 100))
	require.Panics(t, func() { Percentile([]float64{1}, 0) })
	require.Panics(t, func() { Percentile(nil, 50) })
}

func TestSummarizeRejectsNonFinite(t *testing.T) {
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		require.Panics(t, func() { Summarize([]float64{1, x}) }, "sample %v", x)
	}
}

func TestSummarizeDoesNotModifyInput(t *testing.T) {
	xs := []float64{3, 1, 2}
	Summarize(xs)
	require.Equal(t, []float64{3, 1, 2}, xs)
}

// TestSummarizeExactMean: the mean is the exact rational sum rounded once,
// then divided by n, and is independent of sample order (naive float
// summation is not: 1e16 + 1 + 1 - 1e16).
func TestSummarizeExactMean(t *testing.T) {
	xs := []float64{1e16, 1, 1, -1e16}
	require.Equal(t, 0.5, Summarize(xs).Mean)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		xs := randomSamples(rng)
		want := ratSum(xs)
		f, _ := want.Float64()
		require.Equal(t, f/float64(len(xs)), Summarize(xs).Mean, "samples %v", xs)
	}
}

// TestSummarizeStddevCorrectlyRounded proves correct rounding of every
// result independently of the implementation: v is the correctly rounded
// sqrt of the exact variance V iff V lies between the squares of the
// midpoints to v's neighbours (ties going to the even neighbour).
func TestSummarizeStddevCorrectlyRounded(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		xs := randomSamples(rng)
		if len(xs) < 2 {
			continue
		}
		v := Summarize(xs).Stddev
		requireCorrectSqrt(t, exactVariance(xs), v, xs)
	}
}

func requireCorrectSqrt(t *testing.T, variance *big.Rat, v float64, xs []float64) {
	t.Helper()
	require.False(t, math.IsNaN(v) || math.IsInf(v, 0), "stddev %v for %v", v, xs)
	if variance.Sign() == 0 {
		require.Equal(t, 0.0, v)
		return
	}
	mid := func(a, b float64) *big.Rat {
		r := new(big.Rat).Add(new(big.Rat).SetFloat64(a), new(big.Rat).SetFloat64(b))
		return r.Quo(r, big.NewRat(2, 1))
	}
	sq := func(r *big.Rat) *big.Rat { return new(big.Rat).Mul(r, r) }
	even := math.Float64bits(v)&1 == 0
	lo := sq(mid(math.Nextafter(v, 0), v))
	hi := sq(mid(v, math.Nextafter(v, math.Inf(1))))
	cLo, cHi := variance.Cmp(lo), variance.Cmp(hi)
	ok := (cLo > 0 || (cLo == 0 && even)) && (cHi < 0 || (cHi == 0 && even))
	require.True(t, ok, "stddev %v is not the correctly rounded sqrt of %v (samples %v)", v, variance.FloatString(30), xs)
}

func ratSum(xs []float64) *big.Rat {
	s := new(big.Rat)
	for _, x := range xs {
		s.Add(s, new(big.Rat).SetFloat64(x))
	}
	return s
}

func exactVariance(xs []float64) *big.Rat {
	n := big.NewRat(int64(len(xs)), 1)
	mean := new(big.Rat).Quo(ratSum(xs), n)
	ss := new(big.Rat)
	for _, x := range xs {
		d := new(big.Rat).Sub(new(big.Rat).SetFloat64(x), mean)
		ss.Add(ss, d.Mul(d, d))
	}
	return ss.Quo(ss, big.NewRat(int64(len(xs)-1), 1))
}

// randomSamples mixes latency-like values, wide magnitudes, duplicates and
// tiny differences, the cases where rounding decisions are delicate.
func randomSamples(rng *rand.Rand) []float64 {
	n := 1 + rng.IntN(40)
	xs := make([]float64, n)
	base := rng.Float64() * 1e4
	for i := range xs {
		switch rng.IntN(5) {
		case 0:
			xs[i] = base + rng.Float64()
		case 1:
			xs[i] = math.Ldexp(rng.Float64(), rng.IntN(200)-100)
		case 2:
			xs[i] = -rng.Float64() * 1e6
		case 3:
			xs[i] = math.Nextafter(base, math.Inf(1))
		default:
			xs[i] = float64(rng.IntN(1000))
		}
	}
	return xs
}

// TestSummarizeSeed reproduces every distribution statistic of the golden
// artifact bit for bit from its request rows.
func TestSummarizeSeed(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "seed-capacity-v4-reasoning.json"))
	require.NoError(t, err)
	var doc struct {
		Metrics        map[string]any               `json:"metrics"`
		RequestTimings []map[string]json.RawMessage `json:"request_timings"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	families := []struct{ name, row, unit string }{
		{"ttft", "ttft_ms", "_ms"}, {"e2e", "e2e_ms", "_ms"}, {"generation", "generation_ms", "_ms"},
		{"time_to_first_output", "time_to_first_output_ms", "_ms"}, {"tpot", "tpot_ms", "_ms"},
		{"decode_tok_s", "decode_tok_s", ""}, {"effective_prefill_tok_s", "effective_prefill_tok_s", ""},
		{"prompt_tokens", "prompt_tokens", ""}, {"completion_tokens", "output_tokens", ""},
	}
	for _, f := range families {
		var xs []float64
		for _, row := range doc.RequestTimings {
			var x float64
			require.NoError(t, json.Unmarshal(row[f.row], &x))
			xs = append(xs, x)
		}
		s := Summarize(xs)
		got := map[string]float64{
			"mean": s.Mean, "stddev": s.Stddev, "mean_ci95_low": s.CI95Low, "mean_ci95_high": s.CI95High,
			"min": s.Min, "p25": s.P25, "p50": s.P50, "p75": s.P75, "p90": s.P90, "p95": s.P95,
			"p99": s.P99, "max": s.Max,
		}
		for stat, v := range got {
			key := f.name + "_" + stat + f.unit
			want, ok := doc.Metrics[key].(float64)
			require.True(t, ok, "seed lacks %s", key)
			require.Equal(t, want, v, "%s", key)
		}
		require.Equal(t, float64(s.N), doc.Metrics[f.name+"_samples"])
	}
}

func ExampleSummarize() {
	s := Summarize([]float64{120, 80, 100, 95, 105})
	fmt.Printf("n=%d mean=%g stddev=%.4f ci95=[%.3f, %.3f] p50=%g p99=%g\n",
		s.N, s.Mean, s.Stddev, s.CI95Low, s.CI95High, s.P50, s.P99)
	// Output: n=5 mean=100 stddev=14.5774 ci95=[87.222, 112.778] p50=100 p99=120
}

func BenchmarkSummarize(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(5, 6))
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = 500 + rng.ExpFloat64()*200 // latency-like, ms
			}
			b.ReportAllocs()
			for b.Loop() {
				Summarize(xs)
			}
		})
	}
}

func FuzzSummarize(f *testing.F) {
	f.Add(1.0, 2.0, 3.0, uint8(3))
	f.Add(1e300, -1e300, 0.5, uint8(7))
	f.Add(5e-324, 0.0, -5e-324, uint8(2))
	f.Fuzz(func(t *testing.T, a, b, c float64, n uint8) {
		xs := []float64{}
		for i := range int(n % 32) {
			xs = append(xs, []float64{a, b, c}[i%3]*float64(i+1))
		}
		for _, x := range xs {
			if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > 1e300 {
				t.Skip()
			}
		}
		s := Summarize(xs)
		if len(xs) == 0 {
			require.True(t, math.IsNaN(s.Mean))
			return
		}
		ordered := []float64{s.Min, s.P25, s.P50, s.P75, s.P90, s.P95, s.P99, s.Max}
		for i := 1; i < len(ordered); i++ {
			require.LessOrEqual(t, ordered[i-1], ordered[i], "percentiles not monotone: %v", ordered)
		}
		require.False(t, math.IsNaN(s.Mean) || math.IsInf(s.Mean, 0))
		require.True(t, s.Min <= s.Mean && s.Mean <= s.Max, "mean %v outside [%v, %v]", s.Mean, s.Min, s.Max)
		if len(xs) >= 2 {
			requireCorrectSqrt(t, exactVariance(xs), s.Stddev, xs)
			require.LessOrEqual(t, s.CI95Low, s.CI95High)
		}
	})
}

func TestSummarizeOrderIndependent(t *testing.T) {
	a := Summarize([]float64{0, math.Copysign(0, -1), 1})
	b := Summarize([]float64{math.Copysign(0, -1), 0, 1})
	if diff := cmp.Diff(a, b, cmp.Comparer(sameFloat)); diff != "" {
		t.Errorf("summaries of the same samples in another order differ:\n%s", diff)
	}
	require.True(t, math.Signbit(a.Min), "-0 is the minimum")
	rng := rand.New(rand.NewPCG(7, 8))
	for range 100 {
		xs := randomSamples(rng)
		ys := slices.Clone(xs)
		rng.Shuffle(len(ys), func(i, j int) { ys[i], ys[j] = ys[j], ys[i] })
		require.Empty(t, cmp.Diff(Summarize(xs), Summarize(ys), cmp.Comparer(sameFloat)))
	}
}

package stats

import (
	"fmt"
	"math"
	"math/big"
	"slices"
)

// Z95 is the two-sided 95% normal quantile used for the confidence interval
// of the mean: the literal 1.96 of the protocol, not 1.959963984540054.
const Z95 = 1.96

// Summary is the summary of a sample set. Undefined statistics are NaN (see
// the package documentation).
type Summary struct {
	N        int     // number of samples
	Mean     float64 // fsum(xs) / N
	Stddev   float64 // sample standard deviation (N-1 denominator)
	CI95Low  float64 // Mean - (Z95 * Stddev) / sqrt(N)
	CI95High float64 // Mean + (Z95 * Stddev) / sqrt(N)
	Min      float64 // smallest sample
	P25      float64 // nearest-rank 25th percentile
	P50      float64 // nearest-rank median
	P75      float64 // nearest-rank 75th percentile
	P90      float64 // nearest-rank 90th percentile
	P95      float64 // nearest-rank 95th percentile
	P99      float64 // nearest-rank 99th percentile
	Max      float64 // largest sample
}

// Summarize summarizes xs, which it does not modify. Every sample must be
// finite: Summarize panics on NaN or ±Inf, which no measurement produces.
// For samples of magnitude near math.MaxFloat64 the sum, standard deviation
// or CI bounds may overflow to ±Inf; measured durations and rates never
// come near.
func Summarize(xs []float64) Summary {
	nan := math.NaN()
	s := Summary{
		N: len(xs), Mean: nan, Stddev: nan, CI95Low: nan, CI95High: nan,
		Min: nan, P25: nan, P50: nan, P75: nan, P90: nan, P95: nan, P99: nan, Max: nan,
	}
	negZero := false
	for i, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			panic(fmt.Sprintf("stats: sample %d is %v; Summarize needs finite samples", i, x))
		}
		negZero = negZero || x == 0 && math.Signbit(x)
	}
	if len(xs) == 0 {
		return s
	}
	sorted := slices.Clone(xs)
	if negZero {
		// -0 sorts before +0 so the result does not depend on sample order.
		slices.SortFunc(sorted, func(a, b float64) int {
			if a == b {
				return cmpBool(!math.Signbit(a), !math.Signbit(b))
			}
			return cmpBool(a > b, a < b)
		})
	} else {
		slices.Sort(sorted)
	}
	s.Min, s.Max = sorted[0], sorted[len(sorted)-1]
	s.P25 = nearestRank(sorted, 25)
	s.P50 = nearestRank(sorted, 50)
	s.P75 = nearestRank(sorted, 75)
	s.P90 = nearestRank(sorted, 90)
	s.P95 = nearestRank(sorted, 95)
	s.P99 = nearestRank(sorted, 99)

	var e exact
	e.load(xs)
	s.Mean = e.sum() / float64(len(xs))
	if len(xs) < 2 {
		return s
	}
	s.Stddev = e.stddev()
	half := (Z95 * s.Stddev) / math.Sqrt(float64(len(xs)))
	s.CI95Low = s.Mean - half
	s.CI95High = s.Mean + half
	return s
}

// cmpBool returns 1 if gt, -1 if lt, else 0.
func cmpBool(gt, lt bool) int {
	switch {
	case gt:
		return 1
	case lt:
		return -1
	}
	return 0
}

// Percentile returns the nearest-rank p-th percentile of sorted (ascending,
// non-empty): the element at 1-based rank ceil(p * len / 100), at least 1.
// p must be in (0, 100].
func Percentile(sorted []float64, p int) float64 {
	if len(sorted) == 0 {
		panic("stats: Percentile of no samples")
	}
	if p <= 0 || p > 100 {
		panic(fmt.Sprintf("stats: percentile %d outside (0, 100]", p))
	}
	return nearestRank(sorted, p)
}

// Median returns the median of sorted (ascending, non-empty): its middle
// element, or the mean of the two middle ones for an even count. Unlike
// Summarize's P50 (the nearest rank), it splits an even count evenly.
func Median(sorted []float64) float64 {
	n := len(sorted)
	if n == 0 {
		panic("stats: Median of no samples")
	}
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

func nearestRank(sorted []float64, p int) float64 {
	n := len(sorted)
	rank := (p*n + 99) / 100 // ceil(p*n/100) in exact integer arithmetic
	return sorted[max(rank, 1)-1]
}

// exact holds the samples as integers a_i with x_i = a_i * 2^exp, which
// makes the sum and the sum of squares exact.
type exact struct {
	n   int
	exp int     // common binary exponent of the scaled samples
	s   big.Int // sum of a_i
	q   big.Int // sum of a_i^2
}

// mantExp splits a finite nonzero x into an odd integer m and e with
// x = m * 2^e.
func mantExp(x float64) (m int64, e int) {
	frac, exp := math.Frexp(x) // x = frac * 2^exp, 0.5 <= |frac| < 1
	m = int64(math.Ldexp(frac, 53))
	e = exp - 53
	for m&1 == 0 {
		m >>= 1
		e++
	}
	return m, e
}

func (e *exact) load(xs []float64) {
	e.n = len(xs)
	e.exp = math.MaxInt
	for _, x := range xs {
		if x != 0 {
			_, ex := mantExp(x)
			e.exp = min(e.exp, ex)
		}
	}
	if e.exp == math.MaxInt { // all zero
		e.exp = 0
		return
	}
	var a, a2 big.Int
	for _, x := range xs {
		if x == 0 {
			continue
		}
		m, ex := mantExp(x)
		a.SetInt64(m)
		a.Lsh(&a, uint(ex-e.exp))
		e.s.Add(&e.s, &a)
		a2.Mul(&a, &a)
		e.q.Add(&e.q, &a2)
	}
}

// sum returns the exact sum rounded once to float64 (nearest, ties to even).
func (e *exact) sum() float64 {
	var f big.Float
	f.SetInt(&e.s) // exact: precision grows to the bit length
	f.SetMantExp(&f, e.exp)
	v, _ := f.Float64()
	return v
}

// stddev returns the correctly rounded sqrt of the exact sample variance
//
//	var = (n*Q - S^2) / (n*(n-1)) * 2^(2*exp)
//
// Write var = num/den * 2^(2*exp). For an even shift 2k chosen so that
// r = floor(sqrt(num * 2^(2k) / den)) has at least 64 bits, r is exact or
// lies strictly between two integers; OR-ing a sticky 1 into its lowest bit
// when it is inexact keeps every bit that decides rounding to 53 bits (the
// round bit sits at least 10 places higher), so rounding that integer once
// gives the correctly rounded result: sqrt(var) = r * 2^(exp-k).
func (e *exact) stddev() float64 {
	var num, den, t big.Int
	n := big.NewInt(int64(e.n))
	num.Mul(n, &e.q)
	t.Mul(&e.s, &e.s)
	num.Sub(&num, &t)
	if num.Sign() == 0 {
		return 0
	}
	den.SetInt64(int64(e.n) * int64(e.n-1))
	// sqrt(num/den) has about (bitlen(num)-bitlen(den))/2 bits; shift so
	// it has at least 66.
	k := 66 - (num.BitLen()-den.BitLen())/2
	k = max(k, 0)
	num.Lsh(&num, uint(2*k))
	var quo, rem big.Int
	quo.QuoRem(&num, &den, &rem)
	var r big.Int
	r.Sqrt(&quo)
	t.Mul(&r, &r)
	if rem.Sign() != 0 || t.Cmp(&quo) != 0 {
		r.SetBit(&r, 0, 1) // sticky: the true root is above r
	}
	var f big.Float
	f.SetInt(&r)
	f.SetMantExp(&f, e.exp-k)
	v, _ := f.Float64()
	return v
}

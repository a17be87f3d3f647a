package arrival

import "math"

// This file holds the two transcendental functions the samplers need, the
// natural logarithm and the exponential, written with IEEE-754 basic
// operations only (+, -, *, /, comparisons and exact bit manipulation).
// IEEE-754 rounds each basic operation correctly, so the same sequence of
// operations gives the same bits on every conforming machine.
//
// Package math is not used for these on purpose: math.Log has assembly
// implementations on amd64 and s390x and math.Exp on amd64, arm64 and
// s390x, with portable Go elsewhere, and they do not agree: on amd64
// math.Exp(709.5) is +Inf and math.Log(2^-1074) is -709.09, where the
// portable versions (on 386, say) give 1.35e308 and -744.44. A schedule must
// be the same everywhere. For the
// same reason the samplers use neither rand.ExpFloat64 nor
// rand.NormFloat64, whose ziggurat tails call math.Exp and math.Log.
// math.Sqrt is used: IEEE-754 requires square root to be correctly rounded,
// and every implementation is.
//
// The Go specification lets a compiler fuse x*y + z into one fused
// multiply-add, which rounds once instead of twice, even across statements
// (arm64, ppc64le, s390x, riscv64 and amd64 at GOAMD64=v3 do). Every
// product below that is stored or feeds an addition or subtraction is
// wrapped in an explicit float64 conversion, which the specification says
// forces the rounding and so prevents the fusion. The compiled package has
// no fused instruction on any of those targets (check with
// GOARCH=arm64 go build -gcflags=-S and look for FMADDD, FMSUBD).
//
// Both functions are within a few ulps of the correctly rounded result
// (exactmath_test.go measures it against package math); the samplers need
// reproducibility first and ordinary double accuracy second.

const (
	// ln2Hi is ln 2 rounded to 32 significant bits, so k*ln2Hi is exact
	// for every binary exponent k of a float64 (|k| < 2^11). ln2Lo is the
	// rest of ln 2 (Cody and Waite's split).
	ln2Hi  = 0x1.62e42feep-1
	ln2Lo  = math.Ln2 - ln2Hi
	invLn2 = 1 / math.Ln2

	smallestNormal = 0x1p-1022

	// expOverflow is the largest x with exp(x) finite; expUnderflow is the
	// x below which exp(x) rounds to 0 (half the smallest subnormal).
	expOverflow  = 709.782712893383973096
	expUnderflow = -745.1332191019412076235
)

// Coefficients of the series ln((1+s)/(1-s)) = 2(s + s^3/3 + s^5/5 + ...).
// The reduced argument has |s| <= (√2-1)/(√2+1) < 0.1716, so s^2 < 0.0295
// and the first omitted term, s^23/23, is below 2^-60 of s.
const (
	logC1  = 1.0 / 3
	logC2  = 1.0 / 5
	logC3  = 1.0 / 7
	logC4  = 1.0 / 9
	logC5  = 1.0 / 11
	logC6  = 1.0 / 13
	logC7  = 1.0 / 15
	logC8  = 1.0 / 17
	logC9  = 1.0 / 19
	logC10 = 1.0 / 21
)

// logp returns the natural logarithm of x: -Inf for 0, NaN for x < 0 or
// NaN, +Inf for +Inf.
//
// x = 2^k * m with m in [√2/2, √2] (exact: the exponent and mantissa are
// read from the bits), so ln x = k ln 2 + ln m. With s = (m-1)/(m+1),
// m = (1+s)/(1-s) and ln m is the atanh series above.
func logp(x float64) float64 {
	switch {
	case math.IsNaN(x) || x < 0:
		return math.NaN()
	case x == 0:
		return math.Inf(-1)
	case math.IsInf(x, 1):
		return x
	}
	k := 0
	if x < smallestNormal { // subnormal: scale into the normal range, exactly
		x *= 0x1p54
		k = -54
	}
	b := math.Float64bits(x)
	k += int(b>>52) - 1023
	m := math.Float64frombits(b&(1<<52-1) | 1023<<52) // in [1, 2)
	if m > math.Sqrt2 {
		m *= 0.5
		k++
	}
	f := m - 1 // exact (Sterbenz: m is within a factor 2 of 1)
	s := f / (m + 1)
	z := float64(s * s)
	p := logC10
	p = float64(p*z) + logC9
	p = float64(p*z) + logC8
	p = float64(p*z) + logC7
	p = float64(p*z) + logC6
	p = float64(p*z) + logC5
	p = float64(p*z) + logC4
	p = float64(p*z) + logC3
	p = float64(p*z) + logC2
	p = float64(p*z) + logC1
	s2 := float64(2 * s) // exact
	lnm := s2 + float64(float64(s2*z)*p)
	fk := float64(k)
	return float64(fk*ln2Hi) + (lnm + float64(fk*ln2Lo))
}

// Coefficients 1/j! of the Taylor series of e^r. The reduced argument has
// |r| <= ln2/2 < 0.3466, where the first omitted term, r^15/15!, is below
// 2^-65.
const (
	expC2  = 1.0 / 2
	expC3  = 1.0 / 6
	expC4  = 1.0 / 24
	expC5  = 1.0 / 120
	expC6  = 1.0 / 720
	expC7  = 1.0 / 5040
	expC8  = 1.0 / 40320
	expC9  = 1.0 / 362880
	expC10 = 1.0 / 3628800
	expC11 = 1.0 / 39916800
	expC12 = 1.0 / 479001600
	expC13 = 1.0 / 6227020800
	expC14 = 1.0 / 87178291200
)

// expp returns e^x: 0 below expUnderflow, +Inf above expOverflow, NaN for
// NaN.
//
// x = k ln 2 + r with k = round(x / ln 2), so e^x = 2^k e^r and
// |r| <= ln2/2. r is computed as (x - k*ln2Hi) - k*ln2Lo, where k*ln2Hi is
// exact and the first subtraction cancels exactly; e^r is the Taylor
// series above, evaluated by Horner's rule; the product by 2^k is exact
// unless the result is subnormal, where it is one correctly rounded
// multiplication.
func expp(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return x
	case x > expOverflow:
		return math.Inf(1)
	case x < expUnderflow:
		return 0
	}
	fk := math.Floor(float64(x*invLn2) + 0.5)
	r := (x - float64(fk*ln2Hi)) - float64(fk*ln2Lo)
	p := expC14
	p = float64(p*r) + expC13
	p = float64(p*r) + expC12
	p = float64(p*r) + expC11
	p = float64(p*r) + expC10
	p = float64(p*r) + expC9
	p = float64(p*r) + expC8
	p = float64(p*r) + expC7
	p = float64(p*r) + expC6
	p = float64(p*r) + expC5
	p = float64(p*r) + expC4
	p = float64(p*r) + expC3
	p = float64(p*r) + expC2
	p = float64(p*r) + 1
	p = float64(p*r) + 1
	return scale2(p, int(fk))
}

// scale2 returns p * 2^k for p in [0.5, 2] and k in [-1076, 1024].
func scale2(p float64, k int) float64 {
	switch {
	case k > 1023: // p < 1 here, else e^x would have overflowed
		return (p * 2) * pow2(k-1)
	case k < -1022: // a subnormal result: one rounding, in the last product
		return (p * pow2(k+54)) * 0x1p-54
	}
	return p * pow2(k)
}

// pow2 returns 2^k for k in [-1022, 1023], built from its bits.
func pow2(k int) float64 {
	return math.Float64frombits(uint64(k+1023) << 52)
}

package arrival

import (
	"math"
	"math/rand/v2"
)

// Every product is rounded by an explicit float64 conversion before it is
// stored or returned, so that no compiler fuses it with a later addition
// into a multiply-add (see exactmath.go).
//
// This file draws the random variates of the built-in processes from a
// *rand.Rand using only r.Uint64, whose sequence for a PCG source is fixed
// by its algorithm, and the portable logp and expp of exactmath.go, so a
// seed gives the same draws on every platform.

// uniform returns a uniform draw in the open interval (0, 1): the top 52
// bits k of one r.Uint64(), as (k + 1/2) / 2^52. The result is exact, never
// 0 or 1 (so its logarithm is finite), and symmetric about 1/2; 52 bits of
// resolution are far below what a schedule in nanoseconds can show.
func uniform(r *rand.Rand) float64 {
	return float64((float64(r.Uint64()>>12) + 0.5) * 0x1p-52)
}

// signedUniform returns a uniform draw in (-1, 1), 2U-1 for the U uniform
// would return from the same r.Uint64(): (2k + 1 - 2^52) / 2^52, computed
// exactly in integers. It is never 0.
func signedUniform(r *rand.Rand) float64 {
	k := int64(r.Uint64() >> 12)
	return float64(float64(2*k+1-1<<52) * 0x1p-52)
}

// exponential returns an exponential draw with mean 1 by inversion: if U is
// uniform on (0, 1), P(-ln U > x) = P(U < e^-x) = e^-x. The draws lie in
// [2^-53, 53 ln 2] ≈ [1.1e-16, 36.7].
func exponential(r *rand.Rand) float64 {
	return -logp(uniform(r))
}

// normal returns a standard normal draw by Marsaglia's polar method: for
// (u, v) uniform in the unit disc with s = u^2 + v^2, u√(-2 ln s / s) is
// standard normal. Points outside the disc (a fraction 1 - π/4 of them)
// are drawn again. signedUniform is never 0, so s > 0. The method's second normal, v√(-2 ln s / s), is not kept: the
// sampler holds no state beyond r.
func normal(r *rand.Rand) float64 {
	for {
		u := signedUniform(r)
		v := signedUniform(r)
		s := float64(u*u) + float64(v*v)
		if s < 1 {
			return float64(u * math.Sqrt(float64(-2*logp(s))/s))
		}
	}
}

// gammaUnit returns a Gamma(a, 1) draw (shape a > 0, scale 1) by the method
// of Marsaglia and Tsang ("A simple method for generating gamma
// variables", ACM TOMS 26(3), 2000).
//
// For a >= 1, with d = a - 1/3 and c = 1/√(9d): draw X standard normal and
// set V = (1 + cX)^3; if V > 0, draw U uniform and accept dV when
// ln U < X^2/2 + d - dV + d ln V. The cheaper squeeze U < 1 - 0.0331 X^4
// accepts most draws without a logarithm. Acceptance is above 95% for
// every a >= 1.
//
// For a < 1 it uses their boost: if Y ~ Gamma(a+1, 1) and U is uniform,
// independent of Y, then Y U^(1/a) ~ Gamma(a, 1). U is drawn after Y, and
// U^(1/a) is computed as e^(ln U / a), which underflows to 0 for the very
// short intervals of small shapes.
func gammaUnit(r *rand.Rand, a float64) float64 {
	if a < 1 {
		y := gammaUnit(r, a+1)
		return float64(y * expp(logp(uniform(r))/a))
	}
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := normal(r)
		v := 1 + float64(c*x)
		if v <= 0 {
			continue
		}
		v = float64(float64(v*v) * v)
		u := uniform(r)
		x2 := float64(x * x)
		if u < 1-float64(0.0331*float64(x2*x2)) {
			return float64(d * v)
		}
		if logp(u) < float64(0.5*x2)+float64(d*((1-v)+logp(v))) {
			return float64(d * v)
		}
	}
}

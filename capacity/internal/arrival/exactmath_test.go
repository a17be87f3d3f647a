package arrival

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// ulps returns the distance between a and b in units in the last place,
// for finite a and b of the same sign.
func ulps(a, b float64) uint64 {
	x, y := math.Float64bits(a), math.Float64bits(b)
	if x > y {
		return x - y
	}
	return y - x
}

func TestLogMatchesMath(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	xs := []float64{
		1, 2, 0.5, math.E, 10, math.Sqrt2, math.Nextafter(math.Sqrt2, 2),
		math.Nextafter(1, 2), math.Nextafter(1, 0), 0x1p-53, 1 - 0x1p-53,
		smallestNormal, math.MaxFloat64,
	}
	for range 200_000 {
		// Uniforms as the samplers draw them, and values over the whole range.
		xs = append(xs, uniform(r), math.Float64frombits(r.Uint64()>>1))
	}
	var worst uint64
	for _, x := range xs {
		if !(x >= smallestNormal) || math.IsInf(x, 1) {
			continue // subnormals: see TestLogSubnormal
		}
		got, want := logp(x), math.Log(x)
		if want == 0 {
			require.Zero(t, got, "logp(%v)", x)
			continue
		}
		d := ulps(got, want)
		worst = max(worst, d)
		require.LessOrEqual(t, d, uint64(2), "logp(%v) = %v, math.Log = %v", x, got, want)
	}
	t.Logf("worst logp error: %d ulp", worst)
}

// TestLogSubnormal checks logp on subnormals against k ln 2 for powers of
// two. math.Log is no reference there: on amd64 its assembly gives
// ln(2^-1074) as -709.09, the logarithm of the smallest normal.
func TestLogSubnormal(t *testing.T) {
	for k := -1074; k < -1022; k++ {
		x := math.Ldexp(1, k)
		want := float64(k) * math.Ln2
		require.LessOrEqual(t, ulps(logp(x), want), uint64(1), "logp(2^%d)", k)
		require.LessOrEqual(t, ulps(logp(3*x), want+math.Log(3)), uint64(2), "logp(3·2^%d)", k)
	}
}

func TestLogSpecialValues(t *testing.T) {
	require.True(t, math.IsInf(logp(0), -1))
	require.True(t, math.IsInf(logp(math.Inf(1)), 1))
	require.True(t, math.IsNaN(logp(-1)))
	require.True(t, math.IsNaN(logp(math.NaN())))
}

func TestExpMatchesMath(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	xs := []float64{
		0, 1, -1, 0.5 * math.Ln2, -0.5 * math.Ln2, 700, -700, 709,
		-708, -710, -740, -745, expUnderflow, 1e-300, -1e-300,
	}
	for range 200_000 {
		// The arguments of the gamma boost, ln U / b, and the whole range.
		xs = append(xs, logp(uniform(r))/(MinBurstiness+r.Float64()),
			expUnderflow+(709-expUnderflow)*r.Float64())
	}
	var worst uint64
	for _, x := range xs {
		got, want := expp(x), math.Exp(x)
		d := ulps(got, want)
		if want < smallestNormal { // subnormal: absolute error in units of the smallest one
			require.LessOrEqual(t, d, uint64(1), "expp(%v) = %v, math.Exp = %v", x, got, want)
			continue
		}
		worst = max(worst, d)
		require.LessOrEqual(t, d, uint64(2), "expp(%v) = %v, math.Exp = %v", x, got, want)
	}
	t.Logf("worst expp error: %d ulp", worst)
}

func TestExpSpecialValues(t *testing.T) {
	// math.Exp is no reference above 709: on amd64 its assembly returns
	// +Inf from about 709.1 (the portable version, on 386 for instance,
	// gives e^709.5 = 1.35e308). e^expOverflow is finite and the next
	// float64 up overflows.
	require.Less(t, expp(expOverflow), math.MaxFloat64)
	require.Greater(t, expp(expOverflow), 0.999999999*math.MaxFloat64)
	require.True(t, math.IsInf(expp(math.Nextafter(expOverflow, 800)), 1))
	require.Equal(t, math.SmallestNonzeroFloat64, expp(-745.1))
	require.True(t, math.IsInf(expp(math.Inf(1)), 1))
	require.True(t, math.IsInf(expp(710), 1))
	require.Zero(t, expp(math.Inf(-1)))
	require.Zero(t, expp(-746))
	require.True(t, math.IsNaN(expp(math.NaN())))
	require.Equal(t, 1.0, expp(0))
}

package stats

import "math"

// confidence95 is the confidence of the t-intervals of TInterval95: 95%,
// two-sided.
const confidence95 = 0.95

// TInterval95 returns the mean of xs and its two-sided 95% confidence
// interval by Student's t distribution, for xs the values of a few
// independent runs (a metric across repeated runs):
//
//	mean ± t(0.975, n-1) · s / sqrt(n)
//
// with mean and s Summarize's (exact, order independent) and t the
// 0.975 quantile of the t distribution with n-1 degrees of freedom
// (12.706 for 2 runs, 4.303 for 3, 2.262 for 10; 1.96 only in the limit;
// see tQuantile). Fewer than 2 values leave the bounds NaN (and no value,
// the mean too); values that are all equal give an interval of width 0.
// Every value must be finite, as for Summarize.
func TInterval95(xs []float64) (mean, lo, hi float64) {
	s := Summarize(xs)
	if s.N < 2 {
		return s.Mean, math.NaN(), math.NaN()
	}
	half := tQuantile(1-(1-confidence95)/2, float64(s.N-1)) * s.Stddev / math.Sqrt(float64(s.N))
	return s.Mean, s.Mean - half, s.Mean + half
}

// tQuantile is the p quantile (p in (0.5, 1)) of Student's t distribution
// with nu degrees of freedom. Its upper tail is
//
//	P(T > t) = I_x(nu/2, 1/2) / 2,  x = nu / (nu + t^2),
//
// I the regularized incomplete beta function, which rises with x: the
// quantile is the x where I_x = 2(1-p), found by bisection to the float64
// resolution, then t = sqrt(nu (1-x) / x). It agrees with the closed
// forms and the tables to 1e-9 (TestTQuantile).
func tQuantile(p, nu float64) float64 {
	want := 2 * (1 - p)
	lo, hi := 0.0, 1.0
	for range 200 {
		mid := (lo + hi) / 2
		if mid == lo || mid == hi {
			break
		}
		if regIncBeta(nu/2, 0.5, mid) < want {
			lo = mid
		} else {
			hi = mid
		}
	}
	x := (lo + hi) / 2
	return math.Sqrt(nu * (1 - x) / x)
}

// regIncBeta is the regularized incomplete beta function I_x(a, b) for x
// in [0, 1], by its continued fraction (Lentz's method, as in Numerical
// Recipes' betai), using the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) where
// the fraction converges slowly.
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(a*math.Log(x) + b*math.Log1p(-x) + lab - la - lb)
	if x < (a+1)/(a+b+2) {
		return front * betaFraction(a, b, x) / a
	}
	return 1 - front*betaFraction(b, a, 1-x)/b
}

// betaFraction evaluates the continued fraction of the incomplete beta
// function at x by Lentz's method.
func betaFraction(a, b, x float64) float64 {
	const tiny = 1e-300
	guard := func(v float64) float64 {
		if math.Abs(v) < tiny {
			return tiny
		}
		return v
	}
	c, d := 1.0, 1/guard(1-(a+b)*x/(a+1))
	h := d
	for m := 1.0; m <= 1000; m++ {
		num := m * (b - m) * x / ((a + 2*m - 1) * (a + 2*m))
		d = 1 / guard(1+num*d)
		c = guard(1 + num/c)
		h *= d * c
		num = -(a + m) * (a + b + m) * x / ((a + 2*m) * (a + 2*m + 1))
		d = 1 / guard(1+num*d)
		c = guard(1 + num/c)
		step := d * c
		h *= step
		if math.Abs(step-1) < 1e-16 {
			break
		}
	}
	return h
}

package arrival

import (
	"math"
	"math/rand/v2"
)

// Name names one of the built-in arrival processes. Its values are the
// strings a configuration file or command line carries.
type Name string

// The built-in arrival processes.
const (
	// Constant spaces requests evenly: every interval is exactly 1/Rate.
	Constant Name = "constant"
	// Poisson draws exponential intervals with mean 1/Rate, the arrivals
	// of independent clients.
	Poisson Name = "poisson"
	// Gamma draws gamma intervals with mean 1/Rate whose spread is set by
	// Spec.Burstiness, as vLLM's bench serve --burstiness defines it.
	Gamma Name = "gamma"
)

// ParseName returns the Name spelled s, which must be exactly one of
// "constant", "poisson" or "gamma". Any other string gets a *field.Error (Kind ErrInvalidSpec) for
// the field Spec.Process.
func ParseName(s string) (Name, error) {
	switch n := Name(s); n {
	case Constant, Poisson, Gamma:
		return n, nil
	}
	return "", specError("Spec.Process", s, wantName)
}

// wantName is the allowed range of Spec.Process, as error messages say it.
const wantName = `one of "constant", "poisson", "gamma"`

// Process is an arrival process: the distribution of the time between two
// consecutive requests. Interval returns one draw, in units of the mean
// interval: the draws have mean 1, and a schedule at a rate of λ requests
// per second multiplies them by 1/λ seconds. Separating the shape from the
// rate is what lets one Process serve every rate.
//
// Interval must take all its randomness from r, so a seeded r makes the
// schedule reproducible, and must return a finite number >= 0; Offsets
// reports any other value as an error of Kind ErrInvalidInterval.
type Process interface {
	Interval(r *rand.Rand) float64
}

// ProcessFunc adapts an ordinary function to the Process interface.
type ProcessFunc func(r *rand.Rand) float64

var _ Process = ProcessFunc(nil)

// Interval returns f(r).
func (f ProcessFunc) Interval(r *rand.Rand) float64 { return f(r) }

// ConstantProcess is the Constant process: every interval is 1. It draws
// nothing from r.
type ConstantProcess struct{}

var _ Process = ConstantProcess{}

// Interval returns 1.
func (ConstantProcess) Interval(*rand.Rand) float64 { return 1 }

// PoissonProcess is the Poisson process: the intervals are exponential
// with mean 1, drawn by inversion as -ln U for one uniform U in (0, 1)
// (see uniform). The coefficient of variation of the intervals is 1.
type PoissonProcess struct{}

var _ Process = PoissonProcess{}

// Interval returns one exponential draw with mean 1.
func (PoissonProcess) Interval(r *rand.Rand) float64 { return exponential(r) }

// GammaProcess is the Gamma process with the given burstiness b: the
// intervals are Gamma(shape b, scale 1/b), whose mean is 1 and whose
// coefficient of variation is 1/√b (see the package documentation).
//
// Burstiness 1 is the exponential distribution, and Interval then draws
// exactly as PoissonProcess does, so a gamma Spec with burstiness 1 and a
// poisson Spec with the same seed give the same schedule. Other shapes are
// drawn by Marsaglia and Tsang's method (see gammaUnit).
type GammaProcess struct {
	// Burstiness is the gamma shape b. Below 1 arrivals cluster into
	// bursts; above 1 they are more even than Poisson. A Spec bounds it to
	// [MinBurstiness, MaxBurstiness]; used directly, any finite b > 0
	// draws, and any other value makes Interval return NaN.
	Burstiness float64
}

var _ Process = GammaProcess{}

// Interval returns one Gamma(b, 1/b) draw, or NaN when the burstiness is
// not a finite positive number.
func (g GammaProcess) Interval(r *rand.Rand) float64 {
	b := g.Burstiness
	switch {
	case !(b > 0) || math.IsInf(b, 1):
		return math.NaN()
	case b == 1:
		return exponential(r)
	}
	return float64(gammaUnit(r, b) / b)
}

package arrival

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/anvilbench/anvil/capacity/internal/field"
)

// Bounds of a Spec and of a schedule's length.
const (
	// MinRate is the lowest Spec.Rate, one request per 1000 s on average.
	// With MaxN requests the mean span is then 10^9 s, far inside the
	// longest time.Duration (about 9.2·10^9 s), so a valid Spec cannot
	// overflow its offsets.
	MinRate = 1e-3
	// MaxRate is the highest Spec.Rate. Its mean interval, 1 µs, is 1000
	// nanoseconds, so rounding the offsets to the nanosecond moves an
	// interval by at most 0.05% of the mean.
	MaxRate = 1e6
	// MinBurstiness is the smallest gamma burstiness (coefficient of
	// variation 10). Already at 0.01 about 80% of the intervals are below
	// 10^-9 of the mean, so the schedule is a few huge bursts; smaller
	// shapes do not describe a load.
	MinBurstiness = 0.01
	// MaxBurstiness is the largest gamma burstiness (coefficient of
	// variation 0.1); a smoother load is better described as Constant.
	MaxBurstiness = 100.0
	// MaxN is the largest number of offsets one schedule holds: 8 MB of
	// time.Duration, more requests than any single capacity run sends.
	MaxN = 1_000_000
)

// Spec describes an arrival schedule. Its zero value is not valid: Process
// and Rate must be set.
type Spec struct {
	// Process is the arrival process.
	Process Name
	// Rate is the mean request rate in requests per second, in
	// [MinRate, MaxRate].
	Rate float64
	// Burstiness is the shape of the gamma intervals, for Process Gamma
	// only: in [MinBurstiness, MaxBurstiness], or 0 for the default 1
	// (Poisson). For Constant and Poisson it must be 0.
	Burstiness float64
	// Seed selects the random stream (see NewRand). Every value is valid;
	// Constant draws nothing, so its schedule does not depend on Seed.
	Seed int64
}

// ErrInvalidSpec is the Kind of every error about an invalid field of a
// Spec or argument of Schedule or Offsets, so callers can test
// errors.Is(err, ErrInvalidSpec).
var ErrInvalidSpec = errors.New("arrival: invalid spec")

// specError is the *field.Error of an invalid field of a Spec or argument
// of Schedule or Offsets (name is "Spec." and the field name, or the
// argument's: "n", "rate", "p", "r"). Its message reads
// "arrival: Spec.Rate = 0: must be in [0.001, 1e+06] requests per second".
func specError(name string, value any, want string) *field.Error {
	return &field.Error{Pkg: "arrival", Field: name, Value: value, Rule: "must be " + want, Kind: ErrInvalidSpec}
}

// Allowed ranges, as error messages say them (spec_test.go checks they
// print the constants above).
const (
	wantRate       = "in [0.001, 1e+06] requests per second"
	wantBurstiness = "0 (meaning 1) or in [0.01, 100]"
	wantN          = "in [0, 1000000]"
)

// Validate reports the first invalid field of s, in declaration order, as a
// *field.Error (Kind ErrInvalidSpec), or nil if s is valid.
func (s Spec) Validate() error {
	switch s.Process {
	case Constant, Poisson, Gamma:
	default:
		return specError("Spec.Process", s.Process, wantName)
	}
	if err := checkRate("Spec.Rate", s.Rate); err != nil {
		return err
	}
	b := s.Burstiness
	if s.Process != Gamma {
		if b != 0 {
			return specError("Spec.Burstiness", b, fmt.Sprintf("0 unless Spec.Process is %q", Gamma))
		}
		return nil
	}
	if b != 0 && !(b >= MinBurstiness && b <= MaxBurstiness) {
		return specError("Spec.Burstiness", b, wantBurstiness)
	}
	return nil
}

// checkRate reports a rate outside [MinRate, MaxRate], NaN included.
func checkRate(name string, rate float64) error {
	if !(rate >= MinRate && rate <= MaxRate) {
		return specError(name, rate, wantRate)
	}
	return nil
}

// process returns the Process of a valid s.
func (s Spec) process() Process {
	switch s.Process {
	case Constant:
		return ConstantProcess{}
	case Poisson:
		return PoissonProcess{}
	}
	b := s.Burstiness
	if b == 0 {
		b = 1
	}
	return GammaProcess{Burstiness: b}
}

// seedStream is the PCG stream of every schedule: the ASCII bytes of
// "arrivals". A fixed stream other than 0 keeps a schedule's draws apart
// from those of a PCG that another part of a program seeds with the same
// seed and stream 0.
const seedStream = 0x6172726976616c73

// NewRand returns the generator Schedule draws from for a seed:
// rand.New(rand.NewPCG(uint64(seed), 0x6172726976616c73)), a PCG-DXSM
// generator whose 128-bit state is the two's-complement bits of seed and
// the ASCII bytes of "arrivals". Its Uint64 sequence is fixed by the
// algorithm, so it is the same on every platform.
func NewRand(seed int64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), seedStream))
}

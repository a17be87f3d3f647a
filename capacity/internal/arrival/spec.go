package arrival

import (
	"errors"
	"fmt"
	"math/rand/v2"
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

// ErrInvalidSpec is wrapped by every *SpecError, so callers can test
// errors.Is(err, ErrInvalidSpec).
var ErrInvalidSpec = errors.New("arrival: invalid spec")

// SpecError is one invalid field of a Spec, or invalid argument of
// Schedule or Offsets. Its message reads
// "arrival: Spec.Rate = 0: must be in [0.001, 1e+06] requests per second".
type SpecError struct {
	// Field is "Spec." and the field name, or the argument name ("n",
	// "rate", "p", "r").
	Field string
	// Value is the offending value.
	Value any
	// Want says what is allowed.
	Want string
}

var _ error = (*SpecError)(nil)

// Error implements error.
func (e *SpecError) Error() string {
	format := "arrival: %s = %v: must be %s"
	switch e.Value.(type) {
	case string, Name:
		format = "arrival: %s = %q: must be %s"
	}
	return fmt.Sprintf(format, e.Field, e.Value, e.Want)
}

// Unwrap makes every SpecError match ErrInvalidSpec.
func (e *SpecError) Unwrap() error { return ErrInvalidSpec }

// Allowed ranges, as error messages say them (spec_test.go checks they
// print the constants above).
const (
	wantRate       = "in [0.001, 1e+06] requests per second"
	wantBurstiness = "0 (meaning 1) or in [0.01, 100]"
	wantN          = "in [0, 1000000]"
)

// Validate reports the first invalid field of s, in declaration order, as a
// *SpecError, or nil if s is valid.
func (s Spec) Validate() error {
	switch s.Process {
	case Constant, Poisson, Gamma:
	default:
		return &SpecError{Field: "Spec.Process", Value: s.Process, Want: wantName}
	}
	if err := checkRate("Spec.Rate", s.Rate); err != nil {
		return err
	}
	b := s.Burstiness
	if s.Process != Gamma {
		if b != 0 {
			return &SpecError{Field: "Spec.Burstiness", Value: b,
				Want: fmt.Sprintf("0 unless Spec.Process is %q", Gamma)}
		}
		return nil
	}
	if b != 0 && !(b >= MinBurstiness && b <= MaxBurstiness) {
		return &SpecError{Field: "Spec.Burstiness", Value: b, Want: wantBurstiness}
	}
	return nil
}

// checkRate reports a rate outside [MinRate, MaxRate], NaN included.
func checkRate(field string, rate float64) error {
	if !(rate >= MinRate && rate <= MaxRate) {
		return &SpecError{Field: field, Value: rate, Want: wantRate}
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

package arrival

import (
	"errors"
	"strconv"

	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/anvilbench/anvil/capacity/internal/field"
)

// Schedule returns the first n send offsets of the schedule s describes,
// or the *field.Error (Kind ErrInvalidSpec) of the first invalid field of s or of n. It is a pure
// function of (s, n): the same arguments give the same offsets on every
// platform, and a longer schedule of the same Spec begins with the shorter
// one. It is Offsets of the process s names, at s.Rate, drawing from
// NewRand(s.Seed).
func Schedule(s Spec, n int) ([]time.Duration, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return Offsets(s.process(), s.Rate, NewRand(s.Seed), n)
}

// Offsets returns n send offsets from the start of a run for requests
// arriving by process p at rate requests per second, drawing from r.
//
// The first request leaves at offset 0: the run starts with a request
// rather than with an idle interval, and n requests span n-1 intervals,
// which is what Offered divides by. Offset i (i >= 1) is the sum of the
// first i draws of p, times 1/rate seconds, rounded to the nanosecond:
//
//	offset[i] = round(10^9/rate * (x[0] + ... + x[i-1])) ns
//
// The draws are summed in float64 in units of the mean interval, so the
// Constant process sums exact integers and its offsets are round(i*10^9/rate);
// for any process the relative error of a sum is below n·2^-53 (1.1·10^-10
// at MaxN). Offsets are non-decreasing, since every draw is >= 0 and
// rounding is monotone. Consecutive offsets differ from the drawn intervals
// by less than a nanosecond.
//
// A rate outside [MinRate, MaxRate], n outside [0, MaxN], or a nil p or r
// is a *field.Error (Kind ErrInvalidSpec). A draw that is negative, NaN or infinite, or that puts
// an offset beyond the longest time.Duration, is a *field.Error of Kind ErrInvalidInterval; no
// built-in process at a valid rate does either.
func Offsets(p Process, rate float64, r *rand.Rand, n int) ([]time.Duration, error) {
	switch {
	case p == nil:
		return nil, specError("p", p, "a non-nil Process")
	case r == nil:
		return nil, specError("r", r, "a non-nil *rand.Rand")
	case n < 0 || n > MaxN:
		return nil, specError("n", n, wantN)
	}
	if err := checkRate("rate", rate); err != nil {
		return nil, err
	}
	offsets := make([]time.Duration, n)
	nsPerInterval := 1e9 / rate
	sum := 0.0
	for i := 1; i < n; i++ {
		x := p.Interval(r)
		if !(x >= 0) || math.IsInf(x, 1) {
			return nil, intervalError(i-1, x, "a finite number >= 0")
		}
		sum += x
		ns := math.Round(float64(sum * nsPerInterval))
		if !(ns < maxOffset) {
			return nil, intervalError(i-1, x, fmt.Sprintf("small enough that offset %d fits in a time.Duration", i))
		}
		offsets[i] = time.Duration(ns)
	}
	return offsets, nil
}

// maxOffset is 2^63 ns as a float64 (float64(math.MaxInt64) rounds up to
// 2^63), the first value beyond the longest time.Duration.
const maxOffset = float64(math.MaxInt64)

// ErrInvalidInterval is the Kind of the error about a draw of a Process
// that cannot be scheduled; it is not an ErrInvalidSpec.
var ErrInvalidInterval = errors.New("arrival: invalid interval")

// intervalError is the *field.Error of draw index (0-based: the interval
// between offsets index and index+1), x in units of the mean interval.
// Its message reads "arrival: interval 3 = NaN: must be a finite number
// >= 0".
func intervalError(index int, x float64, want string) *field.Error {
	return &field.Error{Pkg: "arrival", Field: "interval " + strconv.Itoa(index), Value: x, Rule: "must be " + want, Kind: ErrInvalidInterval}
}

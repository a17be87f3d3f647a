package itl

import (
	"errors"
	"math"
	"time"

	"github.com/anvilbench/anvil/capacity/internal/field"
)

// Defaults of the stall rule; the package documentation explains the choice.
const (
	// DefaultStallRelative is the default StallRule.Relative: a gap longer
	// than 10 times its stream's median gap is a stall.
	DefaultStallRelative = 10.0
	// DefaultStallFloor is the default StallRule.Floor: no gap of 50 ms or
	// less is a stall.
	DefaultStallFloor = 50 * time.Millisecond
)

// StallRule decides which gaps of a stream are stalls. A gap is a stall when
// it is longer than the stream's threshold:
//
//	Override                                  when Override > 0
//	max(Relative * median gap, Floor)         otherwise
//
// The zero StallRule is invalid (Relative must be at least 1); start from
// [DefaultStallRule].
type StallRule struct {
	// Relative multiplies the stream's own nearest-rank median gap. It must
	// be finite and at least 1 (below 1 the median gap itself would stall).
	Relative float64
	// Floor is the least threshold: no gap at or below it is a stall. At
	// least 0.
	Floor time.Duration
	// Override, when positive, is the threshold for every stream, replacing
	// Relative and Floor: the user's explicit stall threshold
	// (Workload.StallThreshold). 0 means none; it must not be negative.
	Override time.Duration
}

// DefaultStallRule returns the rule with [DefaultStallRelative],
// [DefaultStallFloor] and no Override.
func DefaultStallRule() StallRule {
	return StallRule{Relative: DefaultStallRelative, Floor: DefaultStallFloor}
}

// Validate reports the first invalid field as a *field.Error (Kind ErrInvalidInput).
func (r StallRule) Validate() error {
	switch {
	case math.IsNaN(r.Relative) || math.IsInf(r.Relative, 0) || r.Relative < 1:
		return inputError("StallRule.Relative", r.Relative, "must be a finite number >= 1")
	case r.Floor < 0:
		return inputError("StallRule.Floor", r.Floor, "must be >= 0s")
	case r.Override < 0:
		return inputError("StallRule.Override", r.Override, "must be >= 0s (0: no override)")
	}
	return nil
}

// threshold is the stall threshold in nanoseconds for a stream whose
// nearest-rank median gap is median nanoseconds. It is a float64 so that
// Relative * median cannot overflow; a gap g is a stall when float64(g) is
// greater.
func (r StallRule) threshold(median float64) float64 {
	if r.Override > 0 {
		return float64(r.Override)
	}
	return max(r.Relative*median, float64(r.Floor))
}

// Result returns the rule as the artifact records it.
func (r StallRule) Result() RuleResult {
	res := RuleResult{Relative: r.Relative, FloorMS: ms(r.Floor)}
	if r.Override > 0 {
		res.OverrideMS = new(ms(r.Override))
	}
	return res
}

// RuleResult is a StallRule as written in the artifact: the JSON object
// "chunk_timing"."stall_rule".
type RuleResult struct {
	// Relative becomes "relative".
	Relative float64
	// FloorMS becomes "floor_ms".
	FloorMS float64
	// OverrideMS becomes "override_ms"; nil (null) when no override was set.
	OverrideMS *float64
}

// ErrInvalidInput is the Kind of every error about bad input to this
// package: an invalid StallRule, an output event stamped before the
// previous one, a negative token count, runs with different rules
// merged, stored gaps no run could hold.
var ErrInvalidInput = errors.New("itl: invalid input")

// inputError is the *field.Error of bad input: name is the input
// ("StallRule.Floor", "Stream.Add at"), rule a phrase ("must be >= 0s").
// Its message reads
// "itl: StallRule.Relative = 0.5: must be a finite number >= 1".
func inputError(name string, value any, rule string) *field.Error {
	return &field.Error{Pkg: "itl", Field: name, Value: value, Rule: rule, Kind: ErrInvalidInput}
}

// ms converts a duration to the artifact's float64 milliseconds.
func ms(d time.Duration) float64 { return float64(d) / 1e6 }

package trace

import (
	"fmt"
	"github.com/anvilbench/anvil/capacity/internal/field"
	"math"
	"time"
)

// Bounds of the options.
const (
	// minSpeedUp is the slowest replay, 1000 times slower than recorded.
	minSpeedUp = 1e-3
	// maxSpeedUp is the fastest replay, a million times faster than
	// recorded: a day of trace in under a tenth of a second.
	maxSpeedUp = 1e6
	// maxFirst is the largest First, ten million rows.
	maxFirst = 10_000_000
)

// An Option changes how a Reader reads a trace and what it yields. The
// options are plain values: Format, SpeedUp, Window and First. Each kind
// may be given once; each has a Check method that returns the error
// NewReader would report for it.
type Option interface {
	apply(*options) error
}

// options are a Reader's resolved options.
type options struct {
	format  Format
	speedUp float64
	window  Window
	first   int
	seen    map[string]bool
}

func (o *options) once(name string) error {
	if o.seen[name] {
		return &field.Error{Pkg: pkg, Kind: errInvalid, Field: name, Rule: "must be given at most once"}
	}
	o.seen[name] = true
	return nil
}

// SpeedUp divides every offset by its value: SpeedUp(10) replays a
// trace ten times faster than recorded. It must be in [0.001,
// 1e6]; without it the trace is replayed as recorded (1).
type SpeedUp float64

// Check returns the error NewReader would report for s, or nil.
func (s SpeedUp) Check() error {
	if f := float64(s); math.IsNaN(f) || f < minSpeedUp || f > maxSpeedUp {
		return &field.Error{Pkg: pkg, Kind: errInvalid, Field: "SpeedUp", Value: f,
			Rule: "must be " + fmt.Sprintf("in [%g, %g]", minSpeedUp, maxSpeedUp)}
	}
	return nil
}

func (s SpeedUp) apply(o *options) error {
	if err := o.once("SpeedUp"); err != nil {
		return err
	}
	if err := s.Check(); err != nil {
		return err
	}
	o.speedUp = float64(s)
	return nil
}

// Window keeps the rows whose TraceOffset t has Start <= t < End, on the
// recorded time (before the speed-up), and starts the replay at Start:
// a row's Offset is (t - Start) / speed-up. End 0 means no end. Start must
// be in [0, 10^6 h), End 0 or in (Start, 10^6 h].
type Window struct {
	Start, End time.Duration
}

// Check returns the error NewReader would report for w, or nil.
func (w Window) Check() error {
	if w.Start < 0 || w.Start >= maxOffset {
		return &field.Error{Pkg: pkg, Kind: errInvalid, Field: "Window.Start", Value: w.Start,
			Rule: "must be " + fmt.Sprintf("in [0, %v)", maxOffset)}
	}
	if w.End != 0 && (w.End <= w.Start || w.End > maxOffset) {
		return &field.Error{Pkg: pkg, Kind: errInvalid, Field: "Window.End", Value: w.End,
			Rule: "must be " + fmt.Sprintf("0 (no end) or in (%v, %v]", w.Start, maxOffset)}
	}
	return nil
}

func (w Window) apply(o *options) error {
	if err := o.once("Window"); err != nil {
		return err
	}
	if err := w.Check(); err != nil {
		return err
	}
	o.window = w
	return nil
}

// contains reports whether the recorded offset t is inside the window,
// and whether t is past its end.
func (w Window) contains(t time.Duration) (in, past bool) {
	if w.End != 0 && t >= w.End {
		return false, true
	}
	return t >= w.Start, false
}

// First keeps only the first n rows inside the window. It must be in
// [1, 10^7]; without it every row is kept.
type First int

// Check returns the error NewReader would report for n, or nil.
func (n First) Check() error {
	if n < 1 || n > maxFirst {
		return &field.Error{Pkg: pkg, Kind: errInvalid, Field: "First", Value: int(n),
			Rule: "must be " + fmt.Sprintf("in [1, %d]", maxFirst)}
	}
	return nil
}

func (n First) apply(o *options) error {
	if err := o.once("First"); err != nil {
		return err
	}
	if err := n.Check(); err != nil {
		return err
	}
	o.first = int(n)
	return nil
}

// resolve applies opts over the defaults.
func resolve(opts []Option) (options, error) {
	o := options{speedUp: 1, seen: map[string]bool{}}
	for _, opt := range opts {
		if opt == nil {
			return o, &field.Error{Pkg: pkg, Kind: errInvalid, Field: "Option", Rule: "must be non-nil"}
		}
		if err := opt.apply(&o); err != nil {
			return o, err
		}
	}
	o.seen = nil
	return o, nil
}

// replayOffset is when a replay sends a row recorded at t.
func (o *options) replayOffset(t time.Duration) time.Duration {
	d := t - o.window.Start
	if o.speedUp == 1 {
		return d
	}
	return time.Duration(math.Round(float64(d) / o.speedUp))
}

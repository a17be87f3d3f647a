package capacity

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
)

// defaultAttainment is the share of requests that must meet an SLO when
// SLO.Attainment is 0.
const defaultAttainment = 0.9

// The clocks an SLO's latencies are read on, the values of
// anvil_go.slo.latency_clock.
const (
	// latencyClockScheduled: TTFT and E2E from each request's scheduled
	// time (anvil_go.requests[].scheduled_ttft_ms and scheduled_e2e_ms), for
	// open-loop runs: a request that waited for the in-flight cap is charged
	// for the wait, as the user who arrived then would be.
	latencyClockScheduled = "scheduled"
	// latencyClockSent: TTFT and E2E of the v1 timing rows, from t0, for
	// closed-loop runs (whose requests are due when they are sent).
	latencyClockSent = "sent"
)

// errNotEvaluable is wrapped by the errors of SLO.Evaluate for a report it
// cannot judge (no requests, no wall time, an open-loop report without its
// per-request scheduled clock).
var errNotEvaluable = errors.New("capacity: report cannot be evaluated against an SLO")

// SLO is a service-level objective on per-request latencies, with the
// per-request definition of DistServe (Zhong et al., OSDI 2024), which
// vLLM's bench serve --goodput uses:
//
//   - a request meets the SLO when it succeeded and every bound that is set
//     holds for it: TTFT <= SLO.TTFT, TPOT <= SLO.TPOT, E2E <= SLO.E2E
//     (a request without a TPOT, e.g. a one-token answer, cannot show it
//     meets a TPOT bound and does not); failed and never-sent requests never
//     meet it;
//   - a run meets it when at least Attainment of its requests (the report's
//     requests, failures included) do;
//   - goodput is the number of requests meeting it per second of the run's
//     wall time (wall_clock_ms, drain included): the rate of useful work.
//
// DistServe's own "goodput" is the highest request rate whose run meets
// the SLO; that is what a rate Search finds. A zero bound is unset; at least
// one must be set.
type SLO struct {
	// TTFT bounds the time to the first visible content; 0: unset.
	TTFT time.Duration
	// TPOT bounds the time per output token after the first (tpot_ms); 0: unset.
	TPOT time.Duration
	// E2E bounds the time to the end of the stream; 0: unset.
	E2E time.Duration
	// Attainment is the share of requests that must meet the bounds,
	// (0, 1] (0: 0.9).
	Attainment float64
}

// Set reports whether any bound of s is set.
func (s SLO) Set() bool { return s.TTFT != 0 || s.TPOT != 0 || s.E2E != 0 }

// Resolved returns s with its default attainment, or an error wrapping
// ErrInvalidConfig (each problem a *FieldError naming the field).
func (s SLO) Resolved() (SLO, error) {
	if s.Attainment == 0 {
		s.Attainment = defaultAttainment
	}
	var v validator
	for _, b := range []struct {
		field string
		d     time.Duration
	}{{"SLO.TTFT", s.TTFT}, {"SLO.TPOT", s.TPOT}, {"SLO.E2E", s.E2E}} {
		if b.d < 0 {
			v.add(b.field, b.d, "must be > 0 (or 0: unset)")
		}
	}
	if !s.Set() && len(v.errs) == 0 {
		v.add("SLO.TTFT", s.TTFT, "at least one of TTFT, TPOT and E2E must be set")
	}
	if !(s.Attainment > 0 && s.Attainment <= 1) { // NaN fails both
		v.add("SLO.Attainment", s.Attainment, "must be in (0, 1] (0: %g)", defaultAttainment)
	}
	if err := v.err(); err != nil {
		return SLO{}, err
	}
	return s, nil
}

// String formats s as "ttft<=200ms,tpot<=50ms,attain=0.9" (set bounds only).
func (s SLO) String() string {
	out := ""
	for _, b := range []struct {
		name string
		d    time.Duration
	}{{"ttft", s.TTFT}, {"tpot", s.TPOT}, {"e2e", s.E2E}} {
		if b.d != 0 {
			out += fmt.Sprintf("%s<=%v,", b.name, b.d)
		}
	}
	a := s.Attainment
	if a == 0 {
		a = defaultAttainment
	}
	return out + fmt.Sprintf("attain=%g", a)
}

// Evaluate judges report r against s and returns the anvil_go.slo object;
// it does not change r. Open-loop runs (anvil_go.arrival present) are read
// on the scheduled clock, closed-loop runs on the sent clock
// (anvil_go.slo.latency_clock "scheduled" or "sent"); TPOT is the row's tpot_ms on both. A request
// meets a bound equal to its latency. The error is a *FieldError for an
// invalid s; a report it cannot judge (no requests, no wall time, an
// open-loop report without its per-request scheduled clock) is an error
// too.
func (s SLO) Evaluate(r *artifact.Report) (artifact.SLOResult, error) {
	s, err := s.Resolved()
	if err != nil {
		return artifact.SLOResult{}, err
	}
	if r == nil {
		return artifact.SLOResult{}, fmt.Errorf("%w: nil report", errNotEvaluable)
	}
	if r.Requests <= 0 {
		return artifact.SLOResult{}, fmt.Errorf("%w: requests = %d: must be >= 1", errNotEvaluable, r.Requests)
	}
	if !(r.WallClockMS > 0) || math.IsInf(r.WallClockMS, 0) {
		return artifact.SLOResult{}, fmt.Errorf("%w: wall_clock_ms = %v: must be a finite number > 0", errNotEvaluable, r.WallClockMS)
	}
	res := artifact.SLOResult{
		TTFTMS: boundMS(s.TTFT), TPOTMS: boundMS(s.TPOT), E2EMS: boundMS(s.E2E),
		Attainment: s.Attainment, LatencyClock: latencyClockSent,
	}
	scheduled := r.AnvilGo != nil && r.AnvilGo.Arrival != nil
	if scheduled {
		res.LatencyClock = latencyClockScheduled
	}
	for i := range r.RequestTimings {
		row := &r.RequestTimings[i]
		if !row.TokenTimed() && (res.TTFTMS != nil || res.TPOTMS != nil) {
			return artifact.SLOResult{}, fmt.Errorf("%w: request %d generated no token (an embeddings answer): it has no TTFT or TPOT to bound; bound its E2E alone",
				errNotEvaluable, row.RequestIndex)
		}
		ttft, e2e := &row.TTFTMS, &row.E2EMS
		if scheduled {
			d := r.AnvilGo.Request(row.RequestIndex)
			if d == nil || d.Outcome != artifact.OutcomeSuccess {
				return artifact.SLOResult{}, fmt.Errorf("%w: open-loop request %d has no successful anvil_go.requests entry (its scheduled clock)", errNotEvaluable, row.RequestIndex)
			}
			ttft, e2e = d.ScheduledTTFTMS, d.ScheduledE2EMS
		}
		if within(ttft, res.TTFTMS) && within(row.TPOTMS, res.TPOTMS) && within(e2e, res.E2EMS) {
			res.MetRequests++
		}
	}
	res.Attained = float64(res.MetRequests) / float64(r.Requests)
	res.Passed = res.Attained >= res.Attainment
	res.GoodputRPS = float64(res.MetRequests) / (r.WallClockMS / 1000)
	return res, nil
}

// Apply evaluates s on r (see Evaluate) and records the result as
// r.AnvilGo.SLO, creating the anvil_go object for a report without one.
func (s SLO) Apply(r *artifact.Report) (artifact.SLOResult, error) {
	res, err := s.Evaluate(r)
	if err != nil {
		return res, err
	}
	r.Extension().SLO = &res
	return res, nil
}

// boundMS is a bound in milliseconds, nil when unset.
func boundMS(d time.Duration) *float64 {
	if d == 0 {
		return nil
	}
	ms := client.MS(d)
	return &ms
}

// within reports whether latency v meets bound (nil: unset, always met); a
// missing latency never meets a set bound.
func within(v, bound *float64) bool {
	if bound == nil {
		return true
	}
	return v != nil && *v <= *bound
}

package merge

import (
	"fmt"
	"math"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/arrival"
)

// This file holds what the merge checks of the shards' timelines: each
// shard's anvil_go.requests[] offsets against its own rows, the global
// arrival schedule and its own in-flight cap.

// offsetTolerance is how far two offsets of a request that must agree may
// differ: an offset is written as milliseconds of a nanosecond Duration,
// which reads back within a nanosecond for any offset under 100 days, and
// the differences of two such offsets within a few nanoseconds more. A
// microsecond is far above that rounding and far below any shift that
// moves a latency.
const offsetTolerance = time.Microsecond

// checkTimelines refuses a shard whose anvil_go.requests[] offsets are not
// those of its run: a request due at another offset from its shard's
// start than the global arrival schedule's (regenerated from
// anvil_go.arrival: process, rate, burstiness and seed; a shard schedules
// from its own start, which lies within shardStartTolerance of the common
// one), sent before it was due or before the shard started, ended after
// the shard did, or whose queue_ms, scheduled TTFT and E2E, or row
// latencies (time_to_first_output_ms, ttft_ms, e2e_ms) are not the
// differences of its offsets; and, in an open loop, a shard that had more
// requests in flight at once than its own cap.
func checkTimelines(in []shardIn) error {
	schedule, err := globalSchedule(in)
	if err != nil {
		return err
	}
	for i := range in {
		s := &in[i]
		rows := make(map[int]*artifact.TimingRow, len(s.r.RequestTimings))
		for k := range s.r.RequestTimings {
			rows[s.r.RequestTimings[k].RequestIndex] = &s.r.RequestTimings[k]
		}
		for k := range s.r.AnvilGo.Requests {
			d := &s.r.AnvilGo.Requests[k]
			if msg := timelineFault(d, rows[d.RequestIndex], s.r.WallClockMS, schedule); msg != "" {
				return refuse("%s (shard %d): anvil_go.requests[] request %d: %s", s.name, s.shard().Index, d.RequestIndex, msg)
			}
		}
		if a := s.r.AnvilGo.Arrival; a != nil {
			if f := inFlightOf(s.r.AnvilGo.Requests, a.MaxInFlight); f.OverCapRequests > 0 {
				return refuse("%s (shard %d): anvil_go.requests[] has %d requests in flight at once, over its anvil_go.arrival.max_in_flight %d", s.name, s.shard().Index, f.Peak, a.MaxInFlight)
			}
		}
	}
	return nil
}

// globalSchedule is the due offsets of the whole open loop the shards
// split, up to the largest request index any of them holds; nil for a
// closed loop (no anvil_go.arrival).
func globalSchedule(in []shardIn) ([]time.Duration, error) {
	a := in[0].r.AnvilGo.Arrival
	if a == nil {
		return nil, nil
	}
	n := 0
	for _, s := range in {
		for _, d := range s.r.AnvilGo.Requests {
			n = max(n, d.RequestIndex+1)
		}
	}
	spec := arrival.Spec{Process: arrival.Name(a.Process), Rate: a.RateRPS, Seed: a.Seed}
	if spec.Process == arrival.Gamma && a.Burstiness != nil {
		spec.Burstiness = *a.Burstiness
	}
	offsets, err := arrival.Schedule(spec, n)
	if err != nil {
		return nil, refuse("%s: anvil_go.arrival (process %s, rate %v, seed %d) gives no schedule: %v", in[0].name, a.Process, a.RateRPS, a.Seed, err)
	}
	return offsets, nil
}

// timelineFault says what is wrong with d's offsets (from its shard's
// start), "" when nothing: row is its timing row (nil for a failure),
// wallMS its shard's wall clock, schedule the global one (nil for a
// closed loop).
func timelineFault(d *artifact.RequestDetail, row *artifact.TimingRow, wallMS float64, schedule []time.Duration) string {
	tol := float64(offsetTolerance) / 1e6
	differs := func(a, b float64) bool { return !(math.Abs(a-b) <= tol) } // NaN differs
	// diff says value must be to - from; a nil one skips the check.
	type diff struct {
		name            string
		value, from, to *float64
		what            string
	}
	if schedule != nil && d.ScheduledMS != nil {
		if d.RequestIndex < 0 || d.RequestIndex >= len(schedule) {
			return fmt.Sprintf("request_index out of the schedule's 0..%d", len(schedule)-1)
		}
		if due := float64(schedule[d.RequestIndex]) / 1e6; differs(*d.ScheduledMS, due) {
			return fmt.Sprintf("scheduled_ms %v is not its offset in the arrival schedule, %v", *d.ScheduledMS, due)
		}
	}
	switch {
	case d.ScheduledMS != nil && *d.ScheduledMS < -tol:
		return fmt.Sprintf("scheduled_ms %v is before its shard started", *d.ScheduledMS)
	case d.SentMS != nil && *d.SentMS < -tol:
		return fmt.Sprintf("sent_ms %v is before its shard started", *d.SentMS)
	case d.SentMS != nil && d.ScheduledMS != nil && *d.SentMS < *d.ScheduledMS-tol:
		return fmt.Sprintf("sent_ms %v is before its scheduled_ms %v: a request is never sent before it is due", *d.SentMS, *d.ScheduledMS)
	case d.EndMS != nil && *d.EndMS > wallMS+tol:
		return fmt.Sprintf("end_ms %v is after its shard's wall_clock_ms %v", *d.EndMS, wallMS)
	}
	checks := []diff{
		{"queue_ms", d.QueueMS, d.ScheduledMS, d.SentMS, "sent_ms - scheduled_ms"},
		{"scheduled_ttft_ms", d.ScheduledTTFTMS, d.ScheduledMS, d.FirstContentMS, "first_content_ms - scheduled_ms"},
		{"scheduled_e2e_ms", d.ScheduledE2EMS, d.ScheduledMS, d.EndMS, "end_ms - scheduled_ms"},
	}
	if row != nil {
		checks = append(checks,
			diff{"the row's time_to_first_output_ms", &row.TimeToFirstOutputMS, d.SentMS, d.FirstOutputMS, "first_output_ms - sent_ms"},
			diff{"the row's ttft_ms", &row.TTFTMS, d.SentMS, d.FirstContentMS, "first_content_ms - sent_ms"},
			diff{"the row's e2e_ms", &row.E2EMS, d.SentMS, d.EndMS, "end_ms - sent_ms"})
	}
	for _, c := range checks {
		if c.value == nil || c.from == nil || c.to == nil {
			continue
		}
		if want := *c.to - *c.from; differs(*c.value, want) {
			return fmt.Sprintf("%s %v is not %s, %v", c.name, *c.value, c.what, want)
		}
	}
	return ""
}

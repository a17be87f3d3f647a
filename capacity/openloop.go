package capacity

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/anvilbench/anvil/capacity/arrival"
	"github.com/anvilbench/anvil/capacity/artifact"
)

// sendBuffers are what one in-flight slot of an open loop keeps for the
// requests that hold the slot in turn, so memory scales with the cap on
// requests in flight, not with the schedule.
type sendBuffers struct {
	timer *chunkTimer // the slot's per-chunk timing, merged when the phase ends
}

// openPhase runs the measured requests of an open loop. Request i is due at
// start + schedule[i]; one dispatcher sends the requests in index order,
// each at its due time whatever the completions, as long as fewer than the
// runner's concurrency are in flight. A request due while the cap is
// reached waits for a slot; its requestClock.taken stays its due time, so
// the wait is its queue time and counts in its scheduled-clock latencies
// (coordinated omission cannot hide it). A request that is sent late
// because an earlier one waited is late by as much: the dispatch is FIFO.
//
// The stop rules are the closed loop's: cancelling ctx or a refusal
// (record) ends the phase at once and cancels the requests in flight;
// Workload.MaxFailures stops dispatch and lets in-flight requests finish.
// The phase returns when every dispatched request has finished.
func (r *runner) openPhase(ctx context.Context, start time.Time, schedule []time.Duration) {
	r.mu.Lock()
	r.warming, r.n, r.dispatched, r.phaseStart = false, len(schedule), 0, start
	r.mu.Unlock()
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	// dispatch ends the dispatcher alone: in-flight requests keep runCtx.
	dispatch, halt := context.WithCancel(runCtx)
	defer halt()

	slots := make(chan *sendBuffers, max(r.concurrency, 1))
	for range min(r.concurrency, len(schedule)) {
		buf := &sendBuffers{timer: newChunkTimer(r.stallRule)}
		defer r.mergeChunks(buf.timer) // after wg.Wait: every request of the slot has finished
		slots <- buf
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for i, offset := range schedule {
		due := start.Add(offset)
		if d := time.Until(due); d > 0 {
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-dispatch.Done():
				return
			}
		}
		var buf *sendBuffers
		select {
		case buf = <-slots: // a free slot: at once when fewer than the cap are in flight
		case <-dispatch.Done():
			return
		}
		if !r.take(dispatch) {
			return
		}
		wg.Go(func() {
			res := r.one(runCtx, i, false, buf.timer)
			res.clock.taken = due
			refused := r.record(res, false)
			slots <- buf
			if refused {
				stop(errRunStopped)
			}
			if r.isStopped() {
				halt() // wake a dispatcher waiting for a later due time
			}
		})
	}
}

// take dispatches the next index of an open loop, or reports that the run
// must not send any more.
func (r *runner) take(ctx context.Context) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ctx.Err() != nil || r.stopped {
		return false
	}
	r.dispatched++
	r.inFlight++
	r.report()
	return true
}

// isStopped reports whether dispatch has stopped (max failures, refusal).
func (r *runner) isStopped() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stopped
}

// timedCampaign reports whether the run is a closed-loop Duration campaign,
// which accounts for what it dispatched. An open loop's Duration fixed its
// schedule, and so its request count, before the run.
func (f *runFacts) timedCampaign() bool { return f.workload.Duration > 0 && f.schedule == nil }

// arrivalOf is anvil_go.arrival of an open-loop run (nil for a closed
// loop): the schedule's process, rate and seed, the in-flight cap, the
// rate the schedule offers over the requests the report accounts for, and
// the rate achieved over the actual send times of the measured requests.
// A rate is nil when it is undefined: fewer than two requests, or every
// request at one instant.
func arrivalOf(f runFacts, results []result, requests int) *artifact.Arrival {
	if f.schedule == nil {
		return nil
	}
	w := f.workload
	a := &artifact.Arrival{Process: string(w.Arrival), RateRPS: w.Rate, Seed: w.Seed, MaxInFlight: w.Concurrency}
	switch w.Arrival {
	case ArrivalPoisson:
		one := 1.0
		a.Burstiness = &one
	case ArrivalGamma:
		b := w.Burstiness
		a.Burstiness = &b
	}
	a.OfferedRPS = definedRate(arrival.Offered(f.schedule[:min(requests, len(f.schedule))]))
	sent := make([]time.Time, 0, len(results))
	for _, res := range results {
		if !res.clock.sent.IsZero() {
			sent = append(sent, res.clock.sent)
		}
	}
	a.AchievedRPS = definedRate(arrival.Achieved(sent))
	return a
}

// definedRate is a rate of package arrival as an artifact value: nil for 0
// (fewer than two times) and +Inf (no span).
func definedRate(v float64) *float64 {
	if v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return &v
}

package capacity

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/anvilbench/anvil/capacity/internal/client"
)

// sendBuffers are what one in-flight slot keeps for the requests that hold
// the slot in turn, so memory scales with the cap on requests in flight,
// not with the plan.
type sendBuffers struct {
	timer *client.ChunkTimer // the slot's per-chunk timing, merged when the phase ends
}

// seams are the resolved seams of the measured phase.
type seams struct {
	source   Source   // never nil: the plan's synthetic requests by default
	schedule Schedule // never nil: closedLoop or the arrival schedule by default
	answerer Answerer // source as an Answerer, nil when it is none
	gates    []Gate   // the observers that are gates
}

// measure runs the measured requests: one dispatcher, on the calling
// goroutine, takes the indexes in order. Request i is sent once it is due
// (its Schedule's Due) and fewer than the runner's concurrency are in
// flight, each gate admitted it and Source gave it; the closed loop is the
// schedule of requests all DueNow. A request with a scheduled time (DueAt,
// DueAfter) keeps it as client.Clock.Taken, so a wait for a slot is its
// queue time and counts in its scheduled-clock latencies (coordinated
// omission cannot hide it). The dispatch is FIFO: a request that waits
// holds back the ones after it.
//
// The stop rules: cancelling ctx or a refusal (record) ends the phase at
// once and cancels the requests in flight; Workload.MaxFailures and the
// early stop end dispatch and let in-flight requests finish; so do the end
// of a Duration campaign and a gate that says no. measure returns when
// every dispatched request has finished, with the error of a Source or a
// Schedule that failed (nil otherwise).
func (r *runner) measure(ctx context.Context, start time.Time, s seams) error {
	indexes := r.indexes()
	n := len(indexes)
	r.mu.Lock()
	r.warming, r.n, r.dispatched, r.phaseStart = false, n, 0, start
	r.flights.Reset()
	r.mu.Unlock()
	r.feed.Attach(r.snapshot)
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	// dispatch ends the dispatcher alone: in-flight requests keep runCtx.
	dispatch, halt := context.WithCancel(runCtx)
	defer halt()

	slots := make(chan *sendBuffers, max(r.concurrency, 1))
	chunks := r.newChunkRun(n)
	defer func() { // after wg.Wait: every request of the phase has finished
		r.mu.Lock()
		r.chunks = chunks.Run()
		r.mu.Unlock()
	}()
	for range min(r.concurrency, n) {
		slots <- &sendBuffers{timer: client.NewChunkTimer(chunks)}
	}
	// ended[i] is closed when request i has ended; endAt[i] is then its end.
	ended := make([]chan struct{}, r.plan.Len())
	endAt := make([]time.Time, r.plan.Len())
	var srcMu sync.Mutex // Source and Answerer calls never overlap

	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	wait := func(at time.Time) bool {
		if d := time.Until(at); d > 0 {
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-dispatch.Done():
				timer.Stop()
				return false
			}
		}
		return true
	}
	// finish files request i's outcome res once it has ended. It is one
	// function of the phase, not a part of each request's goroutine, so
	// that its frame is not on that goroutine's stack while the request
	// reads its stream: a shallower stack is a smaller one once the
	// garbage collector shrinks it.
	finish := func(i int, res *result, at time.Time, done chan struct{}, buf *sendBuffers) {
		if !at.IsZero() {
			res.Clock.Taken = at
		}
		refused := r.record(res, false)
		if s.answerer != nil {
			srcMu.Lock()
			s.answerer.Answer(runCtx, i, Answer{Content: res.answer, Truncated: res.answerCut, OK: res.Fail == nil})
			srcMu.Unlock()
		}
		endAt[i] = time.Now()
		close(done)
		slots <- buf
		if refused {
			stop(errRunStopped)
		}
		if r.isStopped() {
			halt() // wake a dispatcher waiting for a later due time
		}
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, i := range indexes {
		due := s.schedule.Due(dispatch, i)
		if dispatch.Err() != nil {
			return nil // the Schedule gave up waiting: the run is over
		}
		r.dues |= 1 << due.kind
		var at time.Time // the scheduled time; zero for DueNow
		switch due.kind {
		case dueAt:
			at = start.Add(due.offset)
		case dueAfter:
			j := due.after
			if j < 0 || j >= i || ended[j] == nil {
				return fmt.Errorf("%w: Workload.Schedule: request %d is due after request %d, which must be an earlier one (0..%d)", ErrInvalidConfig, i, j, i-1)
			}
			select {
			case <-ended[j]:
			case <-dispatch.Done():
				return nil
			}
			at = endAt[j].Add(due.offset)
		}
		if !at.IsZero() && !wait(at) {
			return nil
		}
		var buf *sendBuffers
		select {
		case buf = <-slots: // a free slot: at once when fewer than the cap are in flight
		case <-dispatch.Done():
			return nil
		}
		if !r.admit(dispatch, i, s.gates) {
			return nil
		}
		srcMu.Lock()
		req, err := s.source.Request(dispatch, i)
		srcMu.Unlock()
		if err != nil {
			r.mu.Lock()
			r.stopped = true
			r.mu.Unlock()
			return fmt.Errorf("capacity: Workload.Source: request %d: %w", i, err)
		}
		if !r.take(dispatch, i) {
			return nil
		}
		done := make(chan struct{})
		ended[i] = done
		wg.Go(func() {
			res := r.one(runCtx, i, false, buf.timer, &req, s.answerer != nil)
			finish(i, res, at, done, buf)
		})
	}
	return nil
}

// indexes are the measured request indexes of the run, ascending: a
// shard's share (Workload.Shard), else every index of the plan.
func (r *runner) indexes() []int {
	if r.owned != nil {
		return r.owned
	}
	ix := make([]int, r.plan.Len())
	for i := range ix {
		ix[i] = i
	}
	return ix
}

// admit asks every gate whether request i may leave, after the run's own
// rules: a closed-loop Duration campaign dispatches nothing after its
// Duration. false ends dispatch.
func (r *runner) admit(ctx context.Context, i int, gates []Gate) bool {
	r.mu.Lock()
	if r.duration > 0 && !r.scheduled && time.Since(r.phaseStart) >= r.duration {
		r.expired = true
	}
	over := r.expired || r.stopped || ctx.Err() != nil
	r.mu.Unlock()
	if over {
		return false
	}
	for _, g := range gates {
		if !g.Admit(i) {
			r.mu.Lock()
			r.expired = true
			r.mu.Unlock()
			return false
		}
	}
	return true
}

// take dispatches request i, or reports that the run must not send any
// more.
func (r *runner) take(ctx context.Context, i int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ctx.Err() != nil || r.stopped {
		return false
	}
	r.dispatched++
	r.inFlight++
	r.flights.Out(i, time.Now())
	r.report()
	return true
}

// isStopped reports whether dispatch has stopped (max failures, refusal,
// the early stop).
func (r *runner) isStopped() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stopped
}

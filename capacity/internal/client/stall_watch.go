package client

import (
	"context"
	"sync/atomic"
	"time"
)

// stallWatch ends a request that received nothing for longer than its
// limit (Workload.StallTimeout). Activity only stores the time of the read
// (an atomic store of the request's own watch, no lock and no timer
// operation per read); the one timer, armed for the limit, checks when it
// fires how long the request has really been idle and either cancels it
// or sleeps again for the rest of the limit. The request is cancelled at
// exactly the last activity + limit, as a timer reset at every read would.
type stallWatch struct {
	limit   time.Duration
	base    time.Time    // monotonic origin of last
	last    atomic.Int64 // nanoseconds after base of the last activity
	timer   *time.Timer
	cancel  context.CancelCauseFunc
	stopped atomic.Bool // set by stop: a firing in progress re-arms nothing
}

// startStallWatch arms a watch whose idle time starts now.
func startStallWatch(limit time.Duration, cancel context.CancelCauseFunc) *stallWatch {
	s := &stallWatch{limit: limit, base: time.Now(), cancel: cancel}
	s.timer = time.AfterFunc(limit, s.fire)
	return s
}

// touch records activity at at.
func (s *stallWatch) touch(at time.Time) { s.last.Store(int64(at.Sub(s.base))) }

// fire runs when the timer expires.
func (s *stallWatch) fire() {
	if s.stopped.Load() {
		return
	}
	idle := time.Since(s.base) - time.Duration(s.last.Load())
	if idle >= s.limit {
		s.cancel(errStallTimeout)
		return
	}
	s.timer.Reset(s.limit - idle)
}

// stop disarms the watch. A fire already running when stop is called may
// re-arm the timer once more; that firing then sees stopped and ends.
func (s *stallWatch) stop() {
	s.stopped.Store(true)
	s.timer.Stop()
}

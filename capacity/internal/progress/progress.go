// Package progress makes the progress calls of a capacity run
// (Workload.Progress): a Feed passes on the runner's snapshots as they
// happen and one every Tick that nothing else passed on, so a wait (an
// endpoint that does not answer, a shard waiting for its start, a request
// that takes minutes) is still a snapshot every second; Flights knows the
// age of the oldest request in flight at once.
package progress

import (
	"sync"
	"sync/atomic"
	"time"
)

// Tick is the longest time a run's progress func goes without a call
// while the run is running, with the snapshot's clocks advanced, so a
// caller can say what the run is waiting for.
const Tick = time.Second

// A Feed makes the calls of a run's progress func: the runner's at each
// dispatch and completion (Pass), and one every Tick that nothing else
// called, from a goroutine of its own. Calls never overlap, and a
// snapshot older than one already passed on is dropped. A nil *Feed calls
// nothing. P is the snapshot's type; stamp sets a snapshot's phase and
// the time since the phase started.
type Feed[P any] struct {
	fn    func(P)
	stamp func(p P, phase string, elapsed time.Duration) P
	seq   atomic.Uint64 // orders snapshots: next

	mu     sync.Mutex // serializes fn; guards the fields below
	last   uint64     // seq of the last snapshot passed on
	lastAt time.Time
	phase  string
	since  time.Time          // the phase's start
	source func() (P, uint64) // the runner's snapshot; nil before it runs

	stop chan struct{}
	done chan struct{}
}

// New starts the feed of fn in phase; nil for a nil fn. Close ends it.
func New[P any](fn func(P), stamp func(p P, phase string, elapsed time.Duration) P, phase string) *Feed[P] {
	if fn == nil {
		return nil
	}
	f := &Feed[P]{fn: fn, stamp: stamp, phase: phase, since: time.Now(), lastAt: time.Now(),
		stop: make(chan struct{}), done: make(chan struct{})}
	go f.loop()
	return f
}

// Next is the sequence number of a snapshot taken now.
func (f *Feed[P]) Next() uint64 { return f.seq.Add(1) }

// Enter starts phase, a phase before or between the runner's (the runner
// reports its own phases), and passes the change on at once.
func (f *Feed[P]) Enter(phase string) {
	if f == nil {
		return
	}
	seq := f.Next()
	f.mu.Lock()
	f.phase, f.since, f.source = phase, time.Now(), nil
	f.mu.Unlock()
	var zero P
	f.Pass(zero, seq)
}

// Attach makes snapshot the source of the ticks: the runner's state,
// taken under its lock, with the sequence number of that moment.
func (f *Feed[P]) Attach(snapshot func() (P, uint64)) {
	if f == nil {
		return
	}
	f.mu.Lock()
	f.source = snapshot
	f.mu.Unlock()
}

// Pass calls fn with p, taken when seq was drawn, unless a later
// snapshot was passed on already. A snapshot without the runner's
// counters (a phase of its own, before any Attach) gets the phase and its
// clock.
func (f *Feed[P]) Pass(p P, seq uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if seq <= f.last {
		return
	}
	if f.source == nil {
		p = f.stamp(p, f.phase, time.Since(f.since))
	}
	f.last, f.lastAt = seq, time.Now()
	f.fn(p)
}

// loop ticks until Close: a snapshot every Tick that nothing else passed
// one on.
func (f *Feed[P]) loop() {
	defer close(f.done)
	t := time.NewTicker(Tick / 4)
	defer t.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-t.C:
		}
		f.mu.Lock()
		quiet, source := time.Since(f.lastAt) >= Tick, f.source
		f.mu.Unlock()
		if !quiet {
			continue
		}
		if source != nil {
			f.Pass(source())
		} else {
			var zero P
			f.Pass(zero, f.Next())
		}
	}
}

// Close stops the ticks and waits for the last one.
func (f *Feed[P]) Close() {
	if f == nil {
		return
	}
	close(f.stop)
	<-f.done
}

// Flights tracks the requests of a phase in flight, in dispatch order, so
// the age of the oldest is known at once: dispatch appends (Out),
// completion marks (Back), and the head moves past the finished ones.
type Flights struct {
	starts []time.Time
	done   []bool
	pos    map[int]int // request index -> its position, while in flight
	head   int
}

// Reset empties f for a new phase.
func (f *Flights) Reset() {
	f.starts, f.done, f.head = f.starts[:0], f.done[:0], 0
	f.pos = map[int]int{}
}

// Out records request i sent at t.
func (f *Flights) Out(i int, t time.Time) {
	if f.pos == nil {
		f.pos = map[int]int{}
	}
	f.pos[i] = len(f.starts)
	f.starts, f.done = append(f.starts, t), append(f.done, false)
}

// Back records request i ended.
func (f *Flights) Back(i int) {
	p, ok := f.pos[i]
	if !ok {
		return
	}
	delete(f.pos, i)
	f.done[p] = true
	for f.head < len(f.done) && f.done[f.head] {
		f.head++
	}
}

// Oldest is how long the oldest request in flight has been out at now, 0
// when none is.
func (f *Flights) Oldest(now time.Time) time.Duration {
	if f.head >= len(f.starts) {
		return 0
	}
	return now.Sub(f.starts[f.head])
}

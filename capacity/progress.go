package capacity

import (
	"sync"
	"sync/atomic"
	"time"
)

// progressTick is the longest time Workload.Progress goes without a call
// while Run is running: a wait (an endpoint that does not answer, a shard
// waiting for its start, a request that takes minutes) is still a
// snapshot every second, with its clocks advanced, so a caller can say
// what the run is waiting for.
const progressTick = time.Second

// The phases of a run, Progress.Phase.
const (
	phaseDiscovery   = "discovery"   // the model probe, the context window, the slots, the metrics endpoint
	phaseCalibration = "calibration" // exact prompt sizing
	phaseWarmup      = "warm-up"     // Workload.Warmup's requests
	phaseConnections = "connections" // the connection warm-up
	phaseStart       = "start"       // a shard waiting for Shard.StartAt
	phaseMeasured    = "measured"    // the measured requests
)

// progressFeed makes the calls of Workload.Progress for one run: the
// runner's at each dispatch and completion (report), and one every
// progressTick that nothing else called (tick), from a goroutine of its
// own. Calls never overlap, and a snapshot older than one already passed
// on is dropped. A nil *progressFeed calls nothing.
type progressFeed struct {
	fn  func(Progress)
	seq atomic.Uint64 // orders snapshots: next

	mu     sync.Mutex // serializes fn; guards the fields below
	last   uint64     // seq of the last snapshot passed on
	lastAt time.Time
	phase  string
	since  time.Time                 // the phase's start
	source func() (Progress, uint64) // the runner's snapshot; nil before it runs

	stop chan struct{}
	done chan struct{}
}

// newProgressFeed starts the feed of fn in phaseDiscovery; nil for a nil
// fn. Close ends it.
func newProgressFeed(fn func(Progress)) *progressFeed {
	if fn == nil {
		return nil
	}
	f := &progressFeed{fn: fn, phase: phaseDiscovery, since: time.Now(), lastAt: time.Now(),
		stop: make(chan struct{}), done: make(chan struct{})}
	go f.loop()
	return f
}

// next is the sequence number of a snapshot taken now.
func (f *progressFeed) next() uint64 { return f.seq.Add(1) }

// enter starts phase, a phase before or between the runner's (the runner
// reports its own phases), and passes the change on at once.
func (f *progressFeed) enter(phase string) {
	if f == nil {
		return
	}
	seq := f.next()
	f.mu.Lock()
	f.phase, f.since, f.source = phase, time.Now(), nil
	f.mu.Unlock()
	f.pass(Progress{Phase: phase}, seq)
}

// attach makes snapshot the source of the ticks: the runner's state,
// taken under its lock, with the sequence number of that moment.
func (f *progressFeed) attach(snapshot func() (Progress, uint64)) {
	if f == nil {
		return
	}
	f.mu.Lock()
	f.source = snapshot
	f.mu.Unlock()
}

// pass calls fn with p, taken when seq was drawn, unless a later
// snapshot was passed on already. A snapshot without the runner's
// counters (a phase of its own) gets the phase's clock.
func (f *progressFeed) pass(p Progress, seq uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if seq <= f.last {
		return
	}
	if f.source == nil {
		p.Phase, p.Elapsed = f.phase, time.Since(f.since)
	}
	f.last, f.lastAt = seq, time.Now()
	f.fn(p)
}

// loop ticks until Close: a snapshot every progressTick that nothing
// else passed one on.
func (f *progressFeed) loop() {
	defer close(f.done)
	t := time.NewTicker(progressTick / 4)
	defer t.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-t.C:
		}
		f.mu.Lock()
		quiet, source := time.Since(f.lastAt) >= progressTick, f.source
		f.mu.Unlock()
		if !quiet {
			continue
		}
		if source != nil {
			f.pass(source())
		} else {
			f.pass(Progress{}, f.next())
		}
	}
}

// Close stops the ticks and waits for the last one.
func (f *progressFeed) Close() {
	if f == nil {
		return
	}
	close(f.stop)
	<-f.done
}

// flights tracks the requests of a phase in flight, in dispatch order, so
// the age of the oldest is known at once: dispatch appends, completion
// marks, and the head moves past the finished ones.
type flights struct {
	starts []time.Time
	done   []bool
	pos    map[int]int // request index -> its position, while in flight
	head   int
}

// reset empties f for a new phase.
func (f *flights) reset() {
	f.starts, f.done, f.head = f.starts[:0], f.done[:0], 0
	f.pos = map[int]int{}
}

// out records request i sent at t.
func (f *flights) out(i int, t time.Time) {
	if f.pos == nil {
		f.pos = map[int]int{}
	}
	f.pos[i] = len(f.starts)
	f.starts, f.done = append(f.starts, t), append(f.done, false)
}

// back records request i ended.
func (f *flights) back(i int) {
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

// oldest is how long the oldest request in flight has been out at now, 0
// when none is.
func (f *flights) oldest(now time.Time) time.Duration {
	if f.head >= len(f.starts) {
		return 0
	}
	return now.Sub(f.starts[f.head])
}

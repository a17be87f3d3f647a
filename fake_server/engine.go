package fakeserver

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// maxLag is how far the engine may fall behind its own schedule on a busy
// real clock before it re-anchors the schedule at the present instead of
// running late steps back to back. Under testing/synctest it never applies.
const maxLag = 20 * time.Millisecond

// seq is one request inside the engine. The fields above mu are set before
// submission or touched only by the engine goroutine; the fields below mu
// are shared with the request's handler.
type seq struct {
	arrived time.Time
	prompt  int      // prompt tokens
	hashes  []uint64 // prefix-cache block hashes of the prompt
	plan    *outputPlan
	spec    Range
	rng     *rand.Rand // the request's generator; the engine's after submit

	prefillLeft int  // uncached prompt tokens still to prefill
	chunk       int  // prompt tokens prefilled in the current step
	decoding    bool // decodes in the current step
	emitted     int  // tokens produced so far

	cancelled atomic.Bool
	notify    chan struct{} // capacity 1: "outs changed"

	mu          sync.Mutex
	outs        []stepOut
	final       bool
	cached      int           // prompt tokens found in the prefix cache
	queued      time.Duration // admission, since arrival
	prefillDone time.Duration // end of prefill (first token), since arrival
}

// stepOut is one engine step's output for one sequence: tokens [from, to)
// of the plan, scheduled at since arrival.
type stepOut struct {
	at       time.Duration
	from, to int
}

func newSeq(arrived time.Time, prompt int, hashes []uint64, plan *outputPlan, spec Range, rng *rand.Rand) *seq {
	return &seq{arrived: arrived, prompt: prompt, hashes: hashes, plan: plan, spec: spec, rng: rng,
		notify: make(chan struct{}, 1)}
}

// take returns the outputs produced since the last call and whether the
// sequence has finished.
func (s *seq) take() ([]stepOut, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	outs := s.outs
	s.outs = nil
	return outs, s.final
}

func (s *seq) signal() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// emit produces n tokens at time t.
func (s *seq) emit(t time.Time, n int) {
	from := s.emitted
	s.emitted += n
	s.mu.Lock()
	s.outs = append(s.outs, stepOut{at: t.Sub(s.arrived), from: from, to: s.emitted})
	s.final = !s.plan.endless && s.emitted >= len(s.plan.tokens)
	s.mu.Unlock()
	s.signal()
}

// engine is the batch scheduler: one goroutine runs steps; in each step the
// running sequences either prefill a chunk of their prompt (at most
// MaxBatchTokens per step in total) or decode. A step lasts the prefill time
// of its prompt tokens plus the decode time for its decoding sequences,
// which grows with their number. At most MaxSeqs sequences run; the rest
// wait in arrival order.
type engine struct {
	cfg   *Config
	cache *prefixCache
	stats *engineStats // behind /metrics (metrics.go)

	mu       sync.Mutex
	incoming []*seq
	wake     chan struct{}
	quit     chan struct{}
	done     chan struct{}
}

func newEngine(cfg *Config) *engine {
	return &engine{
		cfg:   cfg,
		cache: newPrefixCache(cfg.CacheTokens / cfg.BlockTokens),
		stats: newEngineStats(),
		wake:  make(chan struct{}, 1),
		quit:  make(chan struct{}),
		done:  make(chan struct{}),
	}
}

func (e *engine) submit(s *seq) {
	e.mu.Lock()
	e.incoming = append(e.incoming, s)
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

func (e *engine) stop() {
	close(e.quit)
	<-e.done
}

func live(ss []*seq) []*seq {
	out := ss[:0]
	for _, s := range ss {
		if !s.cancelled.Load() {
			out = append(out, s)
		}
	}
	clear(ss[len(out):])
	return out
}

func (e *engine) run() {
	defer close(e.done)
	var waiting, running []*seq
	var start time.Time // start of the next step
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		e.mu.Lock()
		waiting = append(waiting, e.incoming...)
		e.incoming = nil
		e.mu.Unlock()
		waiting, running = live(waiting), live(running)
		if len(waiting) == 0 && len(running) == 0 {
			select {
			case <-e.wake:
				start = time.Time{}
				continue
			case <-e.quit:
				return
			}
		}
		if now := time.Now(); start.IsZero() || now.Sub(start) > maxLag {
			start = now
		}
		for len(running) < e.cfg.MaxSeqs && len(waiting) > 0 {
			s := waiting[0]
			waiting = waiting[1:]
			e.admit(s, start)
			running = append(running, s)
		}
		e.publish(len(running), len(waiting), kvOf(running))
		end := start.Add(e.plan(running))
		if d := time.Until(end); d > 0 {
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-e.quit:
				timer.Stop()
				return
			}
		}
		for _, s := range running {
			e.advance(s, end)
		}
		running = finished(running)
		e.publish(len(running), len(waiting), kvOf(running))
		start = end
	}
}

// admit looks the prompt up in the prefix cache. At least the last prompt
// token is always computed, as engines do to produce the first logits.
func (e *engine) admit(s *seq, at time.Time) {
	cached := 0
	if e.cache.capacity > 0 {
		cached = min(e.cache.lookup(s.hashes)*e.cfg.BlockTokens, s.prompt-1)
	}
	s.prefillLeft = s.prompt - cached
	e.admitted(s.prompt, cached)
	s.mu.Lock()
	s.cached = cached
	s.queued = at.Sub(s.arrived)
	s.mu.Unlock()
}

// plan assigns this step's work and returns its duration.
func (e *engine) plan(running []*seq) time.Duration {
	budget, prefill, decoding := e.cfg.MaxBatchTokens, 0, 0
	for _, s := range running {
		s.chunk, s.decoding = 0, false
		switch {
		case s.prefillLeft > 0:
			s.chunk = min(s.prefillLeft, budget)
			budget -= s.chunk
			prefill += s.chunk
		default:
			s.decoding = true
			decoding++
		}
	}
	return e.cfg.prefillTime(prefill) + e.cfg.decodeTime(decoding)
}

// advance applies the step that ended at end to s.
func (e *engine) advance(s *seq, end time.Time) {
	switch {
	case s.chunk > 0:
		s.prefillLeft -= s.chunk
		if s.prefillLeft > 0 {
			return
		}
		e.cache.insert(s.hashes)
		s.mu.Lock()
		s.prefillDone = end.Sub(s.arrived)
		s.mu.Unlock()
		e.output(s, end, min(1, e.remaining(s)))
	case s.decoding:
		k := s.spec.Min
		if s.spec.Max > s.spec.Min {
			k += s.rng.IntN(s.spec.Max - s.spec.Min + 1)
		}
		e.speculated(k)
		e.output(s, end, min(k, e.remaining(s)))
	}
}

func (e *engine) remaining(s *seq) int {
	if s.plan.endless {
		return 1 << 30
	}
	return len(s.plan.tokens) - s.emitted
}

// kvOf is the KV-cache tokens the running sequences hold.
func kvOf(running []*seq) int {
	n := 0
	for _, s := range running {
		n += kvHeld(s)
	}
	return n
}

// finished drops sequences that produced their whole plan.
func finished(ss []*seq) []*seq {
	out := ss[:0]
	for _, s := range ss {
		if s.plan.endless || s.emitted < len(s.plan.tokens) {
			out = append(out, s)
		}
	}
	clear(ss[len(out):])
	return out
}

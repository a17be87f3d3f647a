package fakeserver

import (
	"fmt"
	"time"
)

// slotsAnswerTokens is the answer length of the Slots profile: every free
// answer is exactly this many tokens, the first at the end of the prefill,
// each further one after a decode step.
const slotsAnswerTokens = 16

// Slots returns a profile with an exact concurrency knee: n independent
// slots (Config.SlotPrefill), no reasoning, free answers of exactly A = 16
// tokens (AnswerTokens {16, 16}), one token per decode step, so each
// request holds its slot for exactly service:
//
//	DecodeStep  = service / (2 * (A - 1))
//	SlotPrefill = service - (A - 1) * DecodeStep
//
// (the prefill is half the service time, plus the rounding remainder). The
// time to first token is exactly SlotPrefill, whatever the prompt length
// or the other slots. Requests beyond n wait FIFO, so when requests arrive
// at once the one at queue position k (0-based) starts after floor(k/n)
// whole service times:
//
//	TTFT(k)     = floor(k / n) * service + SlotPrefill
//	finished(k) = (floor(k / n) + 1) * service
//
// With n requests at once every TTFT is SlotPrefill; with n+1 one request
// waits a whole service time more. The answer is longer (so the service
// time too) only when the prompt asks for "exactly N" words or its marker
// needs more than A-1 tokens, or shorter when max_tokens is below A.
// n < 1 or a service shorter than 2*(A-1) ns is a *ConfigError.
func Slots(n int, service time.Duration) (Config, error) {
	steps := slotsAnswerTokens - 1
	if err := firstInvalid(
		check{"Slots n", n, n >= 1, ">= 1"},
		check{"Slots service", service, service >= time.Duration(2*steps), fmt.Sprintf(">= %v", time.Duration(2*steps))},
	); err != nil {
		return Config{}, err
	}
	c := shared("fake-slots", 32768)
	c.PrefillTokensPerSecond = 1_000_000 // unused by slots; kept valid
	c.MaxSeqs = n
	c.DecodeStep = service / time.Duration(2*steps)
	c.SlotPrefill = service - time.Duration(steps)*c.DecodeStep
	c.SpecTokens = Range{1, 1}
	c.AnswerTokens = Range{slotsAnswerTokens, slotsAnswerTokens}
	return c, nil
}

// slot is one running sequence of the slotted engine and the time of its
// next output.
type slot struct {
	s    *seq
	next time.Time
}

// runSlots is the engine loop of Config.SlotPrefill: each of MaxSeqs slots
// runs its sequence on its own timeline (prefill SlotPrefill, then one
// decode step of DecodeStep per output); a slot freed at time t takes the
// next waiting sequence at t.
func (e *engine) runSlots() {
	defer close(e.done)
	var waiting []*seq
	var running []*slot
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	prefill, step := e.cfg.scaled(e.cfg.SlotPrefill), e.cfg.scaled(e.cfg.DecodeStep)
	admit := func(at time.Time) {
		e.mu.Lock()
		waiting = append(waiting, e.incoming...)
		e.incoming = nil
		e.mu.Unlock()
		waiting = live(waiting)
		kept := running[:0]
		for _, sl := range running {
			if !sl.s.cancelled.Load() {
				kept = append(kept, sl)
			}
		}
		clear(running[len(kept):])
		running = kept
		for len(running) < e.cfg.MaxSeqs && len(waiting) > 0 {
			s := waiting[0]
			waiting = waiting[1:]
			e.admit(s, at)
			running = append(running, &slot{s: s, next: at.Add(prefill)})
		}
		kv := 0
		for _, sl := range running {
			kv += kvHeld(sl.s)
		}
		e.publish(len(running), len(waiting), kv)
	}
	for {
		admit(time.Now())
		if len(running) == 0 {
			select {
			case <-e.wake:
				continue
			case <-e.quit:
				return
			}
		}
		next := running[0].next
		for _, sl := range running[1:] {
			if sl.next.Before(next) {
				next = sl.next
			}
		}
		if d := time.Until(next); d > 0 {
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-e.wake:
				timer.Stop()
				continue // admit the newcomer now, then wait again
			case <-e.quit:
				timer.Stop()
				return
			}
		}
		kept := running[:0]
		for _, sl := range running {
			if sl.next.After(next) {
				kept = append(kept, sl)
				continue
			}
			e.slotStep(sl.s, next)
			sl.next = next.Add(step)
			if sl.s.plan.endless || sl.s.emitted < len(sl.s.plan.tokens) {
				kept = append(kept, sl)
			}
		}
		clear(running[len(kept):])
		running = kept
		admit(next) // freed slots take waiting sequences at the event time
	}
}

// slotStep emits s's next output at t: its first token when the prefill
// ends, then the tokens of one decode step.
func (e *engine) slotStep(s *seq, t time.Time) {
	if s.emitted == 0 && s.prefillLeft > 0 {
		s.prefillLeft = 0
		e.cache.insert(s.hashes)
		s.mu.Lock()
		s.prefillDone = t.Sub(s.arrived)
		s.mu.Unlock()
		e.output(s, t, min(1, e.remaining(s)))
		return
	}
	k := s.spec.Min
	if s.spec.Max > s.spec.Min {
		k += s.rng.IntN(s.spec.Max - s.spec.Min + 1)
	}
	e.speculated(k)
	e.output(s, t, min(k, e.remaining(s)))
}

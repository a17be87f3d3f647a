package capacity

import (
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/steady"
)

// The rules a warm-up follows, the values of anvil_go.run.warmup.
const (
	warmupByCount  = "count"  // Workload.Warmup requests
	warmupByTime   = "time"   // for Workload.WarmupFor
	warmupToSteady = "steady" // until steady (Workload.WarmupSteady)
)

// steadyWarmupCheck is how often a warm-up until steady tests its own
// requests.
const steadyWarmupCheck = time.Second

// timedWarmup reports whether w warms up by time or until steady, whose
// request count is a result.
func (w Workload) timedWarmup() bool { return w.WarmupFor > 0 || w.WarmupSteady }

// warmupRule is how a run warms up: at most count requests, none sent
// after the limit (0: none), and, for steady, until the warm-up's own
// requests have a steady window.
type warmupRule struct {
	kind   string
	count  int
	limit  time.Duration
	steady bool
}

// warmupOf is the warm-up rule of w for plan p; its kind is "" when the
// run does not warm up.
func warmupOf(w Workload, p *plan) warmupRule {
	switch {
	case w.WarmupSteady:
		limit := w.WarmupFor
		if limit == 0 {
			limit = defaultSteadyWarmup
		}
		return warmupRule{kind: warmupToSteady, count: p.Warmups, limit: limit, steady: true}
	case w.WarmupFor > 0:
		return warmupRule{kind: warmupByTime, count: p.Warmups, limit: w.WarmupFor}
	case w.Warmup > 0:
		return warmupRule{kind: warmupByCount, count: w.Warmup}
	}
	return warmupRule{}
}

// warmupLog is what the warm-up keeps of its requests to test them for a
// steady window: each one's send and end on the warm-up's clock.
type warmupLog struct {
	start     time.Time
	requests  []steady.Request // by warm-up index; End 0 while in flight
	lastCheck time.Time
	reached   bool
	elapsed   time.Duration // the warm-up's length, set when it ends
}

// sent records warm-up request k's send; r.mu is held.
func (l *warmupLog) sent(k int, at time.Time) {
	for len(l.requests) <= k {
		l.requests = append(l.requests, steady.Request{})
	}
	ms := client.MS(at.Sub(l.start))
	l.requests[k] = steady.Request{At: ms, Sent: ms, End: -1}
}

// ended records warm-up request k's outcome; r.mu is held.
func (l *warmupLog) ended(k int, res result) {
	q := &l.requests[k]
	if !res.clock.sent.IsZero() {
		q.Sent = client.MS(res.clock.sent.Sub(l.start))
		q.At = q.Sent
	}
	q.End = client.MS(time.Since(l.start))
	if !res.clock.end.IsZero() {
		q.End = client.MS(res.clock.end.Sub(l.start))
	}
	if res.row != nil {
		q.OK, q.TTFT = true, res.row.TTFTMS
	}
}

// steadyNow tests the warm-up's requests so far, at most once per
// steadyWarmupCheck; r.mu is held. It reports whether they have a steady
// window that reaches their last two bins and holds at least half of
// their bins (a trend the test is too weak to see in few bins still
// leaves MSER cutting half or more): the warm-up is over.
func (l *warmupLog) steadyNow(now time.Time, concurrency int) bool {
	if l.reached || now.Sub(l.lastCheck) < steadyWarmupCheck {
		return l.reached
	}
	l.lastCheck = now
	phase := client.MS(now.Sub(l.start))
	in := steady.Input{PhaseMS: phase, Load: steady.InFlight, Concurrency: concurrency, Requests: make([]steady.Request, 0, len(l.requests))}
	for _, q := range l.requests {
		if q.End < 0 {
			q.End = phase // in flight: busy to now, not yet a completion
		}
		in.Requests = append(in.Requests, q)
	}
	w := steady.Find(in)
	l.reached = w.Found && *w.EndMS >= float64(w.Bins-2)*w.BinMS && *w.EndMS-*w.StartMS >= float64(w.Bins)*w.BinMS/2
	return l.reached
}

// record writes the warm-up into anvil_go.run.
func (rule warmupRule) record(run *artifact.RunSummary, sent int, log *warmupLog) {
	if rule.kind == "" || run == nil {
		return
	}
	kind, ms := rule.kind, client.MS(log.elapsed)
	run.Warmup, run.WarmupRequests, run.WarmupMS = &kind, &sent, &ms
	if rule.steady {
		reached := log.reached
		run.WarmupSteady = &reached
	}
}

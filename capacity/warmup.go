package capacity

import (
	"math"
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
// steady window (steady.Log, on the warm-up's clock); r.mu guards it.
type warmupLog struct {
	start   time.Time
	log     steady.Log
	elapsed time.Duration // the warm-up's length, set when it ends
}

// sent records warm-up request k's send.
func (l *warmupLog) sent(k int, at time.Time) { l.log.Sent(k, client.MS(at.Sub(l.start))) }

// ended records warm-up request k's outcome.
func (l *warmupLog) ended(k int, res result) {
	sent, end := -1.0, client.MS(time.Since(l.start))
	if !res.Clock.Sent.IsZero() {
		sent = client.MS(res.Clock.Sent.Sub(l.start))
	}
	if !res.Clock.End.IsZero() {
		end = client.MS(res.Clock.End.Sub(l.start))
	}
	ttft := 0.0
	if res.Row != nil {
		ttft = res.Row.TTFTMS
		if !res.Row.TokenTimed() {
			ttft = math.NaN() // an embeddings answer: its trend is on completions
		}
	}
	l.log.Ended(k, sent, end, res.Row != nil, ttft)
}

// steadyNow tests the warm-up's requests so far, at most once per
// steadyWarmupCheck (steady.Log.Steady): the warm-up is over.
func (l *warmupLog) steadyNow(now time.Time, concurrency int) bool {
	return l.log.Steady(client.MS(now.Sub(l.start)), client.MS(steadyWarmupCheck), concurrency)
}

// record writes the warm-up into anvil_go.run.
func (rule warmupRule) record(run *artifact.RunSummary, sent int, log *warmupLog) {
	if rule.kind == "" || run == nil {
		return
	}
	kind, ms := rule.kind, client.MS(log.elapsed)
	run.Warmup, run.WarmupRequests, run.WarmupMS = &kind, &sent, &ms
	if rule.steady {
		reached := log.log.Reached()
		run.WarmupSteady = &reached
	}
}

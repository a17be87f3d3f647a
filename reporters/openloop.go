package reporters

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// The scheduled-clock units of an open-loop run (anvil_go.arrival set):
// latencies from the time each request was due, not from its send, so the
// wait for the in-flight cap counts (what a user arriving at the offered
// rate waits, free of coordinated omission). Nearest-rank percentiles of
// anvil_go.requests[].scheduled_ttft_ms and scheduled_e2e_ms over the
// successful requests; written only for open-loop runs that record them.
const (
	// unitSchedTTFTP50 is the median scheduled_ttft_ms.
	unitSchedTTFTP50 = "sched-ttft-p50-ms"
	// unitSchedTTFTP95 is the p95 of scheduled_ttft_ms.
	unitSchedTTFTP95 = "sched-ttft-p95-ms"
	// unitSchedE2EP50 is the median scheduled_e2e_ms.
	unitSchedE2EP50 = "sched-e2e-p50-ms"
)

// scheduledClock holds the scheduled-clock latencies of an open-loop run,
// each sorted: ttft and e2e over the successful requests, queue (sent -
// scheduled) over every sent request.
type scheduledClock struct {
	ttft, e2e, queue []float64
}

// scheduledOf returns the scheduled clock of r, nil for a closed-loop run
// or an artifact without per-request details.
func scheduledOf(r *artifact.Report) *scheduledClock {
	if arrivalOf(r) == nil || len(r.AnvilGo.Requests) == 0 {
		return nil
	}
	var s scheduledClock
	for i := range r.AnvilGo.Requests {
		d := &r.AnvilGo.Requests[i]
		if d.QueueMS != nil && isFinite(*d.QueueMS) {
			s.queue = append(s.queue, *d.QueueMS)
		}
		if d.Outcome != artifact.OutcomeSuccess {
			continue
		}
		if d.ScheduledTTFTMS != nil && isFinite(*d.ScheduledTTFTMS) {
			s.ttft = append(s.ttft, *d.ScheduledTTFTMS)
		}
		if d.ScheduledE2EMS != nil && isFinite(*d.ScheduledE2EMS) {
			s.e2e = append(s.e2e, *d.ScheduledE2EMS)
		}
	}
	if len(s.ttft) == 0 && len(s.e2e) == 0 && len(s.queue) == 0 {
		return nil
	}
	slices.Sort(s.ttft)
	slices.Sort(s.e2e)
	slices.Sort(s.queue)
	return &s
}

// quantile is the nearest-rank p quantile of sorted, nil when empty.
func quantile(sorted []float64, p float64) *float64 {
	if len(sorted) == 0 {
		return nil
	}
	v := nearestRank(sorted, p)
	return &v
}

func isFinite(v float64) bool { return !isNaNOrInf(v) }

// scheduledSummaries are the page's summary rows of an open loop's
// scheduled clock (none for a closed loop).
func scheduledSummaries(r *artifact.Report) []metricSummary {
	sc := scheduledOf(r)
	if sc == nil {
		return nil
	}
	row := func(name string, vals []float64) metricSummary {
		s := metricSummary{Name: name, Unit: "ms", Samples: len(vals)}
		s.P50, s.P95, s.P99 = deref64(quantile(vals, .5)), deref64(quantile(vals, .95)), deref64(quantile(vals, .99))
		return s
	}
	return []metricSummary{
		row("TTFT from schedule", sc.ttft),
		row("E2E from schedule", sc.e2e),
		row("queue (due to sent)", sc.queue),
	}
}

// deref64 is *p, NaN for nil.
func deref64(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// arrivalLine describes an open loop: the process, the requested rate, the
// schedule's offered rate and the achieved one, and the in-flight cap,
// which each shard of a merged run kept, with how many were in flight
// across the shards and how many went out over the cap
// (anvil_go.shards.in_flight); "" for a closed loop.
func arrivalLine(r *artifact.Report) string {
	a := arrivalOf(r)
	if a == nil {
		return ""
	}
	line := fmt.Sprintf("open loop, %s at %s req/s: offered %s req/s, achieved %s req/s",
		Printable(a.Process), formatFloat(a.RateRPS), rateText(a.OfferedRPS), rateText(a.AchievedRPS))
	if a.MaxInFlight > 0 {
		line += fmt.Sprintf(", at most %d in flight", a.MaxInFlight)
	}
	if sh := r.AnvilGo.Shards; sh != nil && sh.InFlight != nil {
		f := sh.InFlight
		line += fmt.Sprintf(" per shard; across the %d shards up to %d at once", sh.Count, f.Peak)
		if f.OverCapRequests > 0 {
			line += fmt.Sprintf(", %d requests sent over the cap of %d (one process would have queued them)", f.OverCapRequests, f.Cap)
		}
	}
	return line
}

// rateText writes a rate to 3 significant digits (whole numbers from 100
// up), "-" for nil.
func rateText(v *float64) string {
	switch {
	case v == nil:
		return "-"
	case math.Abs(*v) >= 100:
		return strconv.FormatFloat(*v, 'f', 0, 64)
	}
	return strconv.FormatFloat(*v, 'g', 3, 64)
}

// sharedPrefixText says what the prompts of r shared: the configured shared
// prefix, or when a context is shorter the part of it that fits, as the
// prompt layout cuts the prefix to the prompt (capacity/PROTOCOL.md#prompts).
func sharedPrefixText(r *artifact.Report) string {
	s := r.SharedPrefixTokens
	if s <= 0 {
		return "no shared prefix"
	}
	var ctxs []int
	if r.ContextTokens != nil && *r.ContextTokens > 0 {
		ctxs = []int{*r.ContextTokens}
	} else {
		for c := range r.ContextDistribution {
			ctxs = append(ctxs, c)
		}
	}
	if len(ctxs) == 0 {
		return fmt.Sprintf("shared prefix %d tokens", s)
	}
	lo, hi := s, 0
	for _, c := range ctxs {
		lo, hi = min(lo, min(s, c)), max(hi, min(s, c))
	}
	switch {
	case lo == s:
		return fmt.Sprintf("shared prefix %d tokens", s)
	case lo == hi:
		return fmt.Sprintf("shared prefix at most %d tokens (the context; %d configured)", lo, s)
	}
	return fmt.Sprintf("shared prefix at most %d..%d tokens (each context; %d configured)", lo, hi, s)
}

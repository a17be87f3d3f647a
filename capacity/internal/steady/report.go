package steady

import (
	"math"
	"slices"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/stats"
)

// OfReport returns anvil_go.steady of r: the steady-state window of its
// measured phase by Find and the headline metrics over it. load is what
// the window is held to: InFlight for a closed loop, Rate for requests due
// at scheduled times, None for requests due after others ended
// (sessions). It reads anvil_go.requests, the timing rows, wall_clock_ms
// and concurrency, and changes nothing; nil when r has no
// anvil_go.requests or no wall time.
func OfReport(r *artifact.Report, load string) *artifact.Steady {
	if r == nil || r.AnvilGo == nil || len(r.AnvilGo.Requests) == 0 || !(r.WallClockMS > 0) || math.IsInf(r.WallClockMS, 0) {
		return nil
	}
	reqs := requestsOf(r, load)
	in := Input{PhaseMS: r.WallClockMS, Load: load, Concurrency: r.Concurrency}
	for _, q := range reqs {
		in.Requests = append(in.Requests, q.Request)
	}
	for _, d := range r.AnvilGo.Requests {
		if d.ScheduledMS != nil {
			in.Due = append(in.Due, *d.ScheduledMS)
		}
	}
	w := Find(in)
	st := &artifact.Steady{Found: w.Found, BinMS: w.BinMS, Bins: w.Bins, Load: load, Target: w.Target, Achieved: w.Achieved,
		StartMS: w.StartMS, EndMS: w.EndMS, CompletionsZ: w.CompletionsZ, TTFTZ: w.TTFTZ}
	if w.Reason != "" {
		st.Reason = &w.Reason
	}
	if w.Found {
		windowMetrics(st, reqs, load, *w.StartMS, *w.EndMS)
	}
	return st
}

// reportRequest is a sent measured request as the test reads it, with
// its detail and, when it succeeded, its timing row.
type reportRequest struct {
	Request
	first  *float64 // first output offset
	row    *artifact.TimingRow
	detail *artifact.RequestDetail
}

// requestsOf collects the sent measured requests of r.
func requestsOf(r *artifact.Report, load string) []reportRequest {
	rows := make(map[int]*artifact.TimingRow, len(r.RequestTimings))
	for i := range r.RequestTimings {
		rows[r.RequestTimings[i].RequestIndex] = &r.RequestTimings[i]
	}
	var out []reportRequest
	for i := range r.AnvilGo.Requests {
		d := &r.AnvilGo.Requests[i]
		if d.SentMS == nil {
			continue
		}
		q := reportRequest{Request: Request{At: *d.SentMS, Sent: *d.SentMS, End: r.WallClockMS}, first: d.FirstOutputMS, detail: d}
		if d.EndMS != nil {
			q.End = *d.EndMS
		}
		if load == Rate && d.ScheduledMS != nil {
			q.At = *d.ScheduledMS
		}
		if row := rows[d.RequestIndex]; row != nil && d.Outcome == artifact.OutcomeSuccess && d.EndMS != nil {
			ttft := &row.TTFTMS
			if load == Rate {
				ttft = d.ScheduledTTFTMS
			}
			switch {
			case !row.TokenTimed():
				q.row, q.OK, q.TTFT = row, true, math.NaN()
			case ttft != nil:
				q.row, q.OK, q.TTFT = row, true, *ttft
			}
		}
		out = append(out, q)
	}
	return out
}

// windowMetrics sets the headline metrics of the window [start, end) in
// m: the latencies of the requests whose bin key (sent, or due for a
// "rate" load) lies in it, nearest rank; the completions that ended in it
// and the output tokens generated in it, per second of it.
func windowMetrics(m *artifact.Steady, reqs []reportRequest, load string, start, end float64) {
	requests, succeeded, completions := 0, 0, 0.0
	var ttft, ttfo, tpot, e2e, decode, prefill, scheduled []float64
	tokens, usage := 0.0, true
	for _, q := range reqs {
		if q.row != nil {
			if q.End >= start && q.End < end {
				completions++
			}
			t, ok := tokensWithin(q, start, end)
			tokens += t
			usage = usage && ok
		}
		if q.At < start || q.At >= end {
			continue
		}
		requests++
		row := q.row
		if row == nil {
			continue
		}
		succeeded++
		e2e = append(e2e, row.E2EMS)
		if row.TokenTimed() {
			ttft, ttfo = append(ttft, row.TTFTMS), append(ttfo, row.TimeToFirstOutputMS)
		}
		tpot, decode, prefill = appendSet(tpot, row.TPOTMS), appendSet(decode, row.DecodeTokS), appendSet(prefill, row.EffectivePrefillTokS)
		if load == Rate {
			scheduled = appendSet(scheduled, q.detail.ScheduledTTFTMS)
		}
	}
	secs := (end - start) / 1000
	m.Requests, m.Succeeded, m.CompletionsPerS = &requests, &succeeded, new(completions/secs)
	if usage {
		m.OutputTokS = new(tokens / secs)
	}
	m.TTFTP50MS, m.TTFTP95MS = rank(ttft, 50), rank(ttft, 95)
	m.TTFOP50MS, m.TPOTP50MS, m.E2EP50MS = rank(ttfo, 50), rank(tpot, 50), rank(e2e, 50)
	m.DecodeTokSP50, m.PrefillTokSP50 = rank(decode, 50), rank(prefill, 50)
	if load == Rate {
		m.ScheduledTTFTP50MS = rank(scheduled, 50)
	}
}

// tokensWithin is the share of successful request q's output tokens
// generated within [start, end), its usage spread evenly from its first
// output to its end (all of it at the end when the two coincide), and
// whether the request reported usage; a request whose interval misses
// the window adds nothing either way.
func tokensWithin(q reportRequest, start, end float64) (float64, bool) {
	from := q.End
	if q.first != nil {
		from = min(*q.first, q.End)
	}
	if from >= end || q.End < start {
		return 0, true
	}
	row := q.row
	if row.OutputTokenSource != artifact.SourceUsage || row.OutputTokens == nil {
		return 0, false
	}
	n := float64(*row.OutputTokens)
	if q.End == from {
		if q.End >= start && q.End < end {
			return n, true
		}
		return 0, true
	}
	overlap := min(q.End, end) - max(from, start)
	return n * max(overlap, 0) / (q.End - from), true
}

// appendSet appends *v when v is set.
func appendSet(xs []float64, v *float64) []float64 {
	if v == nil {
		return xs
	}
	return append(xs, *v)
}

// rank is the nearest-rank percentile p of xs (sorted in place); nil when
// xs is empty.
func rank(xs []float64, p int) *float64 {
	if len(xs) == 0 {
		return nil
	}
	slices.Sort(xs)
	return new(stats.Percentile(xs, p))
}

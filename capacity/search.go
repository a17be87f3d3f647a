package capacity

import (
	"context"
	"fmt"
	"math"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// The kinds of SLO search (SearchSpec.Kind), the values of
// anvil_go.search.kind.
const (
	// concurrencySearch varies Workload.Concurrency over integers.
	concurrencySearch = "concurrency"
	// rateSearch varies Workload.Rate, the open-loop request rate.
	rateSearch = "rate"
)

// Search defaults.
const (
	// defaultRatePrecision is the relative precision of a rate search when
	// SearchSpec.Precision is 0: it stops once the failing rate is within
	// 5% above the passing one.
	defaultRatePrecision = 0.05
	// defaultRateStartDivisor sets the first rate probed when
	// SearchSpec.Start is 0: Max / 16, four doublings below Max.
	defaultRateStartDivisor = 16
	// probeMissAllowance is the number of requests k that each probe may
	// let miss the SLO and still pass; see probeRequests.
	probeMissAllowance = 10
	// maxSearchRepeats is the largest SearchSpec.Repeats.
	maxSearchRepeats = 100
)

// probeRequests is the number of measured requests of each probe of a
// search for w and slo:
//
//	N = max(R, ceil(k / (1 - a)))   (at most maxRequests)
//
// where R is w.Requests (0: defaultRequests), a the SLO's attainment and k
// = probeMissAllowance. A probe passes when at most floor((1-a)N) of its N
// requests miss the SLO; below 1/(1-a) requests that allowance is 0 and an
// attainment of 0.9 would degenerate into "every request meets it", so
// the run would judge a different objective. With N >= k/(1-a) a passing
// probe may hold up to k misses (N = 100 at a = 0.9, 1,000 at 0.99), and
// the standard error of its attained share, sqrt(a(1-a)/N) <=
// (1-a)·sqrt(a/k), is below a third of the allowed miss share 1-a: one
// unlucky request does not flip a probe. At a = 1 no allowance exists and
// N is R.
func probeRequests(w Workload, slo SLO) (int, error) {
	slo, err := slo.Resolved()
	if err != nil {
		return 0, err
	}
	n := w.Requests
	if n == 0 {
		n = defaultRequests
	}
	if slo.Attainment < 1 {
		// The tolerance absorbs the rounding of 1 - a (1 - 0.9 is
		// 0.09999999999999998), so a = 0.9 gives 100, not 101.
		need := int(math.Ceil(probeMissAllowance/(1-slo.Attainment) - 1e-6))
		n = max(n, min(need, maxRequests))
	}
	return n, nil
}

// A Prober runs one probe of a search: workload w, whose searched field
// already holds the probed value and whose Requests the probe size, and
// returns its report. Search records p and the SLO result in the report's
// anvil_go after Probe returns; a Prober that writes the report somewhere
// first should record them itself (SLO.Apply and anvil_go.search = p).
type Prober interface {
	Probe(ctx context.Context, w Workload, p artifact.SearchProbe) (*artifact.Report, error)
}

// ProberFunc adapts a function to a Prober.
type ProberFunc func(ctx context.Context, w Workload, p artifact.SearchProbe) (*artifact.Report, error)

var _ Prober = ProberFunc(nil)

// Probe calls f.
func (f ProberFunc) Probe(ctx context.Context, w Workload, p artifact.SearchProbe) (*artifact.Report, error) {
	return f(ctx, w, p)
}

// RunProber returns the Prober that runs each probe with Run against t.
func RunProber(t Target) Prober {
	return ProberFunc(func(ctx context.Context, w Workload, _ artifact.SearchProbe) (*artifact.Report, error) {
		return Run(ctx, t, w)
	})
}

// SearchSpec says what a search varies and within which bounds.
type SearchSpec struct {
	// Kind is what the search varies: "concurrency" (Workload.Concurrency,
	// over integers) or "rate" (Workload.Rate, the open-loop request rate).
	Kind string
	// Max is the largest value probed: an integer in 1..16384 for
	// concurrency, a rate in [0.001, 1e6] requests per second for a rate.
	Max float64
	// Start is the first value probed, in (0, Max] (0: 1 for concurrency,
	// Max/16, at least 0.001, for a rate); an integer for concurrency.
	Start float64
	// Precision is the relative precision of a rate search, in (0, 1)
	// (0: 0.05, the failing rate within 5% above the passing one); it must
	// be 0 for concurrency.
	Precision float64
	// Repeats is how many times each value is run, 1..100 (0: 1). With 2
	// or more, each value is judged by the 95% t-interval of its
	// attainment across its runs (SearchValue), the knee is reported with
	// how sure it is (SearchResult.Sure) and attainments that rise with
	// the load are named (SearchResult.NonMonotone).
	Repeats int
}

// SearchResult is the outcome of an SLO search.
type SearchResult struct {
	// Kind is what was searched, "concurrency" or "rate".
	Kind string
	// Best is the highest probed value whose run met the SLO (an integer
	// for concurrency); 0 when no probe passed.
	Best float64
	// Found reports whether any probe passed.
	Found bool
	// AtMax reports that Max itself passed: the knee may lie above Max.
	AtMax bool
	// Failed is the lowest probed value above Best whose run failed the
	// SLO (Best+1 for concurrency, within Precision of Best for a rate);
	// 0 when none failed.
	Failed float64
	// Runs holds every probe's report in probe order; each carries
	// anvil_go.search and anvil_go.slo.
	Runs []*artifact.Report
	// Repeats is the runs of each value (SearchSpec.Repeats).
	Repeats int
	// Values holds each value probed, in probe order: its runs'
	// attainments, their interval and its verdict.
	Values []SearchValue
	// Sure reports that the knee is certain at the 95% level: Best's
	// verdict is "pass" (or nothing passed) and Failed's is "fail" (or
	// nothing failed). Never with one run per value, which has no
	// interval.
	Sure bool
	// NonMonotone names each pair of probed values at which meeting the
	// SLO was not monotone in the load: a higher value whose attainment
	// interval lies wholly above a lower value's. The search's bracket
	// assumes monotonicity; these say where the server broke it. Empty
	// with one run per value.
	NonMonotone []string
}

// Search finds the highest value of the field s names at which a run of w
// meets slo, probing with p (capacity/PROTOCOL.md#anvil-go, "search"):
//
//  1. grow: probe Start, then double (up to Max) while probes pass; if
//     Start fails, halve instead until a probe passes (or the value drops
//     below 1 request in flight, or 0.001 requests per second);
//  2. bisect between the highest passing and the lowest failing value:
//     for concurrency until they are adjacent integers, so Best is exact;
//     for a rate until the failing rate is within Precision of the passing
//     one (relative), taking the midpoint each time.
//
// A value passes when the mean of its runs' attainments (SearchSpec.Repeats
// runs each, 1 by default) is at least the SLO's: the bracket assumes that
// meeting the SLO is monotone in the value (more load, worse latency).
// With repeats, each value's verdict is that of the 95% t-interval of its
// attainment (SearchValue), the result says whether the knee is sure and
// names the pairs of values where attainment rose with the load
// (SearchResult.NonMonotone). Every probe runs w with
// the value set (Concurrency, or Rate) and N = max(R, ceil(10 / (1 - a)))
// requests (at most 16384), where R is w.Requests (0: 60) and a the SLO's
// attainment: 100 at a = 0.9, so that a passing probe may hold up to 10
// misses and one unlucky request does not flip it (the math is at
// probeRequests; at a = 1, N is R). A rate search whose w leaves
// Concurrency at 0 caps the requests in flight at 16384, so the client's
// cap does not bind before the server's.
// w.Duration and w.Burst must be 0: probes are sized by count.
//
// The error is a *FieldError for a bad spec, SLO or workload (checked
// before the first probe), the error of a probe, or ctx's error when the
// search was cancelled; the result then holds the probes run so far.
func Search(ctx context.Context, p Prober, w Workload, slo SLO, s SearchSpec) (SearchResult, error) {
	res := SearchResult{Kind: s.Kind}
	s, err := s.resolved()
	if err != nil {
		return res, err
	}
	if slo, err = slo.Resolved(); err != nil {
		return res, err
	}
	if w, err = probeWorkload(w, slo, s); err != nil {
		return res, err
	}
	res.Repeats = s.Repeats
	probe := func(v float64) (bool, error) {
		pw := w
		if s.Kind == concurrencySearch {
			pw.Concurrency = int(v)
		} else {
			pw.Rate = v
		}
		val := SearchValue{Value: v}
		for k := range s.Repeats {
			info := artifact.SearchProbe{Kind: string(s.Kind), Probe: len(res.Runs), Value: v}
			if s.Repeats > 1 {
				info.Repeat = &k
			}
			rep, err := p.Probe(ctx, pw, info)
			if rep != nil {
				res.Runs = append(res.Runs, rep)
			}
			if err != nil {
				return false, fmt.Errorf("capacity: search probe %d (%s %g): %w", info.Probe, s.Kind, v, err)
			}
			if rep == nil {
				return false, fmt.Errorf("capacity: search probe %d (%s %g): no report", info.Probe, s.Kind, v)
			}
			if err := ctx.Err(); err != nil {
				return false, err // a cancelled probe judges nothing
			}
			sr, err := slo.Apply(rep)
			if err != nil {
				return false, fmt.Errorf("capacity: search probe %d (%s %g): %w", info.Probe, s.Kind, v, err)
			}
			rep.AnvilGo.Search = &info
			val.Attained = append(val.Attained, sr.Attained)
			if st := rep.AnvilGo.Steady; st != nil && !st.Found {
				val.Unsteady++
			}
		}
		val.judge(slo.Attainment)
		res.Values = append(res.Values, val)
		return val.Mean >= slo.Attainment, nil
	}

	lo, hi := 0.0, 0.0 // highest passing, lowest failing; 0: none yet
	v := s.Start
	for {
		pass, err := probe(v)
		if err != nil {
			return res.finish(lo, hi, s), err
		}
		if !pass {
			hi = v
			break
		}
		lo = v
		if v >= s.Max {
			break
		}
		v = math.Min(2*v, s.Max)
	}
	// bisect probes v and narrows the bracket [lo, hi) by its verdict.
	bisect := func(v float64) error {
		pass, err := probe(v)
		if err != nil {
			return err
		}
		if pass {
			lo = v
		} else {
			hi = v
		}
		return nil
	}
	for lo == 0 {
		v = s.half(hi)
		if v == 0 {
			return res.finish(lo, hi, s), nil
		}
		if err := bisect(v); err != nil {
			return res.finish(lo, hi, s), err
		}
	}
	for hi > 0 && !s.close(lo, hi) {
		if err := bisect(s.mid(lo, hi)); err != nil {
			return res.finish(lo, hi, s), err
		}
	}
	return res.finish(lo, hi, s), nil
}

// finish fills the outcome from the bracket [lo, hi) and the values'
// verdicts.
func (r SearchResult) finish(lo, hi float64, s SearchSpec) SearchResult {
	r.Best, r.Failed, r.Found = lo, hi, lo > 0
	r.AtMax = lo >= s.Max
	r.Sure, r.NonMonotone = r.confidence(s.Kind)
	return r
}

// resolved fills the defaults of s and checks it.
func (s SearchSpec) resolved() (SearchSpec, error) {
	var v validator
	switch s.Kind {
	case concurrencySearch:
		if s.Start == 0 {
			s.Start = 1
		}
		if s.Max != math.Trunc(s.Max) || s.Max < 1 || s.Max > maxConcurrency {
			v.add("SearchSpec.Max", s.Max, "must be an integer in 1..%d for a concurrency search", maxConcurrency)
		}
		if s.Start != math.Trunc(s.Start) || s.Start < 1 || s.Start > s.Max {
			v.add("SearchSpec.Start", s.Start, "must be an integer in 1..Max = %g (0: 1)", s.Max)
		}
		if s.Precision != 0 {
			v.add("SearchSpec.Precision", s.Precision, "must be 0 for a concurrency search (it ends at an exact integer)")
		}
	case rateSearch:
		if !(s.Max >= minRate && s.Max <= maxRate) {
			v.add("SearchSpec.Max", s.Max, "must be a rate in [%g, %g] requests per second", float64(minRate), float64(maxRate))
			break
		}
		if s.Start == 0 {
			s.Start = math.Max(s.Max/defaultRateStartDivisor, minRate)
		}
		if s.Precision == 0 {
			s.Precision = defaultRatePrecision
		}
		if !(s.Start >= minRate && s.Start <= s.Max) {
			v.add("SearchSpec.Start", s.Start, "must be a rate in [%g, Max = %g] (0: Max/%d)", float64(minRate), s.Max, defaultRateStartDivisor)
		}
		if !(s.Precision > 0 && s.Precision < 1) {
			v.add("SearchSpec.Precision", s.Precision, "must be in (0, 1) (0: %g)", defaultRatePrecision)
		}
	default:
		v.add("SearchSpec.Kind", s.Kind, "must be %q or %q", concurrencySearch, rateSearch)
	}
	if s.Repeats == 0 {
		s.Repeats = 1
	}
	if s.Repeats < 1 || s.Repeats > maxSearchRepeats {
		v.add("SearchSpec.Repeats", s.Repeats, "must be in 1..%d (0: 1)", maxSearchRepeats)
	}
	return s, v.err()
}

// half is the next value below a failing hi while nothing passed; 0 when
// the bottom of the range failed.
func (s SearchSpec) half(hi float64) float64 {
	if s.Kind == concurrencySearch {
		return math.Floor(hi / 2)
	}
	if hi/2 < minRate {
		return 0
	}
	return hi / 2
}

// close reports whether the bracket [lo, hi) is as narrow as s asks.
func (s SearchSpec) close(lo, hi float64) bool {
	if s.Kind == concurrencySearch {
		return hi-lo <= 1
	}
	return hi-lo <= s.Precision*lo
}

// mid is the value probed inside the bracket.
func (s SearchSpec) mid(lo, hi float64) float64 {
	if s.Kind == concurrencySearch {
		return math.Floor((lo + hi) / 2)
	}
	return (lo + hi) / 2
}

// probeWorkload is w as every probe runs it, checked at the first value.
func probeWorkload(w Workload, slo SLO, s SearchSpec) (Workload, error) {
	var v validator
	if w.Duration != 0 {
		v.add("Workload.Duration", w.Duration, "must be 0 in a search: each probe is sized by its request count (see probeRequests)")
	}
	if w.Burst != 0 {
		v.add("Workload.Burst", w.Burst, "must be 0 in a search")
	}
	if w.Shard.Count != 0 {
		v.add("Workload.Shard.Count", w.Shard.Count, "must be 0 in a search: every probe would need a common start of its own")
	}
	if s.Kind == rateSearch && w.Concurrency == 0 {
		w.Concurrency = maxConcurrency
	}
	if err := v.err(); err != nil {
		return w, err
	}
	n, err := probeRequests(w, slo)
	if err != nil {
		return w, err
	}
	w.Requests = n
	first := w
	if s.Kind == concurrencySearch {
		first.Concurrency = int(s.Start)
	} else {
		first.Rate = s.Start
	}
	if _, err := first.Resolved(); err != nil {
		return w, err
	}
	return w, nil
}

package capacity

import (
	"context"
	"fmt"
	"math"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// SearchKind is what an SLO search varies, the value of anvil_go.search.kind.
type SearchKind string

// The kinds of SLO search.
const (
	// ConcurrencySearch varies Workload.Concurrency over integers.
	ConcurrencySearch SearchKind = "concurrency"
	// RateSearch varies Workload.Rate, the open-loop request rate.
	RateSearch SearchKind = "rate"
)

// Search defaults.
const (
	// DefaultRatePrecision is the relative precision of a rate search when
	// SearchSpec.Precision is 0: it stops once the failing rate is within
	// 5% above the passing one.
	DefaultRatePrecision = 0.05
	// DefaultRateStartDivisor sets the first rate probed when
	// SearchSpec.Start is 0: Max / 16, four doublings below Max.
	DefaultRateStartDivisor = 16
	// ProbeMissAllowance is the number of requests k that each probe may
	// let miss the SLO and still pass; see ProbeRequests.
	ProbeMissAllowance = 10
)

// ProbeRequests is the number of measured requests of each probe of a
// search for w and slo:
//
//	N = max(R, ceil(k / (1 - a)))   (at most MaxRequests)
//
// where R is w.Requests (0: DefaultRequests), a the SLO's attainment and k
// = ProbeMissAllowance. A probe passes when at most floor((1-a)N) of its N
// requests miss the SLO; below 1/(1-a) requests that allowance is 0 and an
// attainment of 0.9 would degenerate into "every request meets it", so
// the run would judge a different objective. With N >= k/(1-a) a passing
// probe may hold up to k misses (N = 100 at a = 0.9, 1,000 at 0.99), and
// the standard error of its attained share, sqrt(a(1-a)/N) <=
// (1-a)·sqrt(a/k), is below a third of the allowed miss share 1-a: one
// unlucky request does not flip a probe. At a = 1 no allowance exists and
// N is R.
func ProbeRequests(w Workload, slo SLO) (int, error) {
	slo, err := slo.Resolved()
	if err != nil {
		return 0, err
	}
	n := w.Requests
	if n == 0 {
		n = DefaultRequests
	}
	if slo.Attainment < 1 {
		// The tolerance absorbs the rounding of 1 - a (1 - 0.9 is
		// 0.09999999999999998), so a = 0.9 gives 100, not 101.
		need := int(math.Ceil(ProbeMissAllowance/(1-slo.Attainment) - 1e-6))
		n = max(n, min(need, MaxRequests))
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
	// Kind is ConcurrencySearch or RateSearch.
	Kind SearchKind
	// Max is the largest value probed: an integer in 1..MaxConcurrency
	// for concurrency, a rate in [MinRate, MaxRate] for a rate.
	Max float64
	// Start is the first value probed, in (0, Max] (0: 1 for concurrency,
	// Max/DefaultRateStartDivisor, at least MinRate, for a rate); an
	// integer for concurrency.
	Start float64
	// Precision is the relative precision of a rate search, in (0, 1)
	// (0: DefaultRatePrecision); it must be 0 for concurrency.
	Precision float64
}

// SearchResult is the outcome of an SLO search.
type SearchResult struct {
	// Kind is what was searched.
	Kind SearchKind
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
}

// Search finds the highest value of the field s names at which a run of w
// meets slo, probing with p (capacity/PROTOCOL.md#anvil-go, "search"):
//
//  1. grow: probe Start, then double (up to Max) while probes pass; if
//     Start fails, halve instead until a probe passes (or the value drops
//     below 1 request in flight, or MinRate);
//  2. bisect between the highest passing and the lowest failing value:
//     for concurrency until they are adjacent integers, so Best is exact;
//     for a rate until the failing rate is within Precision of the passing
//     one (relative), taking the midpoint each time.
//
// The search assumes that meeting the SLO is monotone in the value (more
// load, worse latency); each value is probed once. Every probe runs w with
// the value set (Concurrency, or Rate) and ProbeRequests requests; a rate
// search whose w leaves Concurrency at 0 caps the requests in flight at
// MaxConcurrency, so the client's cap does not bind before the server's.
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
	probe := func(v float64) (bool, error) {
		pw := w
		if s.Kind == ConcurrencySearch {
			pw.Concurrency = int(v)
		} else {
			pw.Rate = v
		}
		info := artifact.SearchProbe{Kind: string(s.Kind), Probe: len(res.Runs), Value: v}
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
		return sr.Passed, nil
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

// finish fills the outcome from the bracket [lo, hi).
func (r SearchResult) finish(lo, hi float64, s SearchSpec) SearchResult {
	r.Best, r.Failed, r.Found = lo, hi, lo > 0
	r.AtMax = lo >= s.Max
	return r
}

// resolved fills the defaults of s and checks it.
func (s SearchSpec) resolved() (SearchSpec, error) {
	var v validator
	switch s.Kind {
	case ConcurrencySearch:
		if s.Start == 0 {
			s.Start = 1
		}
		if s.Max != math.Trunc(s.Max) || s.Max < 1 || s.Max > MaxConcurrency {
			v.add("SearchSpec.Max", s.Max, "must be an integer in 1..%d for a concurrency search", MaxConcurrency)
		}
		if s.Start != math.Trunc(s.Start) || s.Start < 1 || s.Start > s.Max {
			v.add("SearchSpec.Start", s.Start, "must be an integer in 1..Max = %g (0: 1)", s.Max)
		}
		if s.Precision != 0 {
			v.add("SearchSpec.Precision", s.Precision, "must be 0 for a concurrency search (it ends at an exact integer)")
		}
	case RateSearch:
		if !(s.Max >= MinRate && s.Max <= MaxRate) {
			v.add("SearchSpec.Max", s.Max, "must be a rate in [%g, %g] requests per second", float64(MinRate), float64(MaxRate))
			break
		}
		if s.Start == 0 {
			s.Start = math.Max(s.Max/DefaultRateStartDivisor, MinRate)
		}
		if s.Precision == 0 {
			s.Precision = DefaultRatePrecision
		}
		if !(s.Start >= MinRate && s.Start <= s.Max) {
			v.add("SearchSpec.Start", s.Start, "must be a rate in [%g, Max = %g] (0: Max/%d)", float64(MinRate), s.Max, DefaultRateStartDivisor)
		}
		if !(s.Precision > 0 && s.Precision < 1) {
			v.add("SearchSpec.Precision", s.Precision, "must be in (0, 1) (0: %g)", DefaultRatePrecision)
		}
	default:
		v.add("SearchSpec.Kind", s.Kind, "must be %q or %q", ConcurrencySearch, RateSearch)
	}
	return s, v.err()
}

// half is the next value below a failing hi while nothing passed; 0 when
// the bottom of the range failed.
func (s SearchSpec) half(hi float64) float64 {
	if s.Kind == ConcurrencySearch {
		return math.Floor(hi / 2)
	}
	if hi/2 < MinRate {
		return 0
	}
	return hi / 2
}

// close reports whether the bracket [lo, hi) is as narrow as s asks.
func (s SearchSpec) close(lo, hi float64) bool {
	if s.Kind == ConcurrencySearch {
		return hi-lo <= 1
	}
	return hi-lo <= s.Precision*lo
}

// mid is the value probed inside the bracket.
func (s SearchSpec) mid(lo, hi float64) float64 {
	if s.Kind == ConcurrencySearch {
		return math.Floor((lo + hi) / 2)
	}
	return (lo + hi) / 2
}

// probeWorkload is w as every probe runs it, checked at the first value.
func probeWorkload(w Workload, slo SLO, s SearchSpec) (Workload, error) {
	var v validator
	if w.Duration != 0 {
		v.add("Workload.Duration", w.Duration, "must be 0 in a search: each probe is sized by its request count (see ProbeRequests)")
	}
	if w.Burst != 0 {
		v.add("Workload.Burst", w.Burst, "must be 0 in a search")
	}
	if w.Shard.Count != 0 {
		v.add("Workload.Shard.Count", w.Shard.Count, "must be 0 in a search: every probe would need a common start of its own")
	}
	if s.Kind == RateSearch && w.Concurrency == 0 {
		w.Concurrency = MaxConcurrency
	}
	if err := v.err(); err != nil {
		return w, err
	}
	n, err := ProbeRequests(w, slo)
	if err != nil {
		return w, err
	}
	w.Requests = n
	first := w
	if s.Kind == ConcurrencySearch {
		first.Concurrency = int(s.Start)
	} else {
		first.Rate = s.Start
	}
	if _, err := first.Resolved(); err != nil {
		return w, err
	}
	return w, nil
}

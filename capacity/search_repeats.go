package capacity

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/anvilbench/anvil/stats"
)

// The verdicts of a searched value (SearchValue.Verdict).
const (
	// verdictPass: the value meets the SLO, surely with repeats (the
	// interval of its attainment lies at or above the SLO's).
	verdictPass = "pass"
	// verdictFail: it does not, surely with repeats (the interval lies
	// below).
	verdictFail = "fail"
	// verdictUnsure: the interval holds the SLO's attainment: its runs
	// cannot tell.
	verdictUnsure = "unsure"
)

// SearchValue is one value of a search and what its runs attained.
type SearchValue struct {
	// Value is the concurrency or rate probed.
	Value float64
	// Attained is each run's anvil_go.slo.attained, in run order.
	Attained []float64
	// Mean is their mean; Low and High its two-sided 95% t-interval
	// (stats.TInterval95: mean ± t(0.975, n-1) s / sqrt(n)), NaN with one
	// run.
	Mean, Low, High float64
	// Verdict is "pass" when the interval lies at or above the SLO's
	// attainment (Low >= a), "fail" when it lies below (High < a), and
	// "unsure" when it holds a; with one run, "pass" or "fail" by that
	// run's attained. The search's bracket goes by Mean >= a either way.
	Verdict string
	// Unsteady counts the runs without a steady window
	// (anvil_go.steady.found false, capacity/PROTOCOL.md#steady): their
	// attainment mixes the ramp-up and the drain with the steady state.
	Unsteady int
}

// judge sets the mean, the interval and the verdict of v's attainments
// against the SLO's attainment a.
func (v *SearchValue) judge(a float64) {
	v.Mean, v.Low, v.High = stats.TInterval95(v.Attained)
	switch {
	case len(v.Attained) < 2 && v.Mean >= a, v.Low >= a:
		v.Verdict = verdictPass
	case len(v.Attained) < 2, v.High < a:
		v.Verdict = verdictFail
	default:
		v.Verdict = verdictUnsure
	}
}

// confidence says how sure the knee of r is, and names the pairs of
// values whose attainment rose with the load beyond both intervals
// (with repeats only: one run per value has no interval).
func (r SearchResult) confidence(kind string) (bool, []string) {
	if r.Repeats < 2 {
		return false, nil
	}
	at := func(value float64) *SearchValue {
		for i := range r.Values {
			if r.Values[i].Value == value {
				return &r.Values[i]
			}
		}
		return nil
	}
	sure := true
	if b := at(r.Best); r.Found && (b == nil || b.Verdict != verdictPass) {
		sure = false
	}
	if f := at(r.Failed); r.Failed > 0 && (f == nil || f.Verdict != verdictFail) {
		sure = false
	}
	vals := slices.Clone(r.Values)
	slices.SortFunc(vals, func(a, b SearchValue) int { return cmp.Compare(a.Value, b.Value) })
	var rises []string
	for i, lo := range vals {
		for _, hi := range vals[i+1:] {
			if hi.Low > lo.High {
				rises = append(rises, fmt.Sprintf("attainment rose from %.3f [%.3f, %.3f] at %s %g to %.3f [%.3f, %.3f] at %g: not monotone in the load",
					lo.Mean, lo.Low, lo.High, kind, lo.Value, hi.Mean, hi.Low, hi.High, hi.Value))
			}
		}
	}
	return sure, rises
}

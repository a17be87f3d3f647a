package reporters

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"golang.org/x/perf/benchmath"
)

// Comparison is the outcome of Compare: the workload both sides ran, what
// differs in the setup under test, and per metric the old and new values
// with the change and its significance.
//
// Each metric is one value per run (a run's p50, say); a side's value is
// the median over its runs, the delta the relative change of the medians.
// With at least two runs a side, the change is tested as benchstat does:
// a Mann-Whitney U test over the per-run values (benchmath.AssumeNothing),
// significant when p < 0.05 (benchstat's level).
type Comparison struct {
	// OldRuns and NewRuns are the number of runs on each side.
	OldRuns, NewRuns int
	// Workload is the identity every run shares, one "key=value" per
	// identity key in the order of capacity/PROTOCOL.md#comparing, the
	// value as JSON ("context_tokens=65536"). Keys hold no "=", so the
	// first one splits a pair.
	Workload []string
	// Unrecorded lists identity keys no run records: artifacts of a
	// generation that predates them, compared as they are.
	Unrecorded []string
	// Provenance lists the setup keys whose values are not the same in
	// every run (run ids never are), with an empty Problem: they describe
	// the setup under test and do not refuse the comparison.
	Provenance []Difference
	// Metrics are the compared metrics, in a fixed order.
	Metrics []MetricDelta
	// APIs are the API of each side's runs (anvil_go.run.api) and
	// ByDefinition what differs between them by definition, one sentence
	// each (capacity/PROTOCOL.md#comparing-apis); both are set only by
	// CompareAcrossAPIs for two different APIs.
	APIs         [2]string
	ByDefinition []string
}

// A Difference is an artifact key whose value is not the same in the runs
// compared. Values are JSON, "absent" where a run lacks the key.
type Difference struct {
	// Key is the key's dotted path ("serve_flags.thinking_mode").
	Key string
	// Old and New are the key's values on each side, one per run. In a
	// NotComparableError they hold one value each, that of Sides[0] and
	// that of Sides[1].
	Old, New []string
	// Problem says why the key refuses the comparison: "differs",
	// "absent in new", "malformed in old: want an integer >= 1". It is
	// empty in Comparison.Provenance.
	Problem string
}

// MetricDelta is one compared metric.
type MetricDelta struct {
	// Name is the metric's name ("TTFT p50") and Unit its unit ("ms",
	// "tok/s", "requests").
	Name, Unit string
	// Better is "lower" or "higher": the direction of an improvement.
	Better string
	// Old and New are the per-run values; NaN where a run does not record
	// the metric.
	Old, New []float64
	// OldCenter and NewCenter are the medians of the recorded values (NaN
	// when none).
	OldCenter, NewCenter float64
	// DeltaPct is (NewCenter/OldCenter - 1) * 100; NaN when undefined.
	DeltaPct float64
	// Tested says whether a significance test ran: it needs
	// two recorded values on each side.
	Tested bool
	// P is the test's p-value and Significant whether P < 0.05.
	P           float64
	Significant bool
	// Note explains an untested metric or warns about a weak test.
	Note string
}

// Significance parameters.
const (
	// alpha is the significance level of the comparison, benchstat's.
	alpha = 0.05
	// minRunsForSignificance is the fewest runs per side a test needs.
	minRunsForSignificance = 2
)

// compareRun is one run as Compare sees it.
type compareRun struct {
	doc    map[string]any
	values map[string]*float64
}

// sideName names the sides of a comparison.
var sideName = [2]string{"old", "new"}

// comparedMetrics are the metrics of a Comparison, in order.
var comparedMetrics = []struct{ key, name, unit, better string }{
	{"ttft_p50", "TTFT p50", "ms", "lower"},
	{"ttft_p95", "TTFT p95", "ms", "lower"},
	{"ttft_p99", "TTFT p99", "ms", "lower"},
	{"ttfo_p50", "TTFO p50", "ms", "lower"},
	{"tpot_p50", "TPOT p50", "ms", "lower"},
	{"e2e_p50", "E2E p50", "ms", "lower"},
	{"decode_p50", "decode p50", "tok/s", "higher"},
	{"prefill_p50", "prefill p50", "tok/s", "higher"},
	{"throughput", "throughput", "tok/s", "higher"},
	{"steady_output", "steady window output", "tok/s", "higher"},
	{"failures", "failures", "requests", "lower"},
}

// compareRuns checks that every run of each side is the first run's
// workload and that the sides are one workload (over two APIs when
// acrossAPI), then compares metrics.
func compareRuns(old, new []compareRun, acrossAPI bool) (Comparison, error) {
	for s, runs := range [2][]compareRun{old, new} {
		for i := 1; i < len(runs); i++ {
			sides := [2]string{fmt.Sprintf("%s run 1", sideName[s]), fmt.Sprintf("%s run %d", sideName[s], i+1)}
			if res := matchIdentity(runs[0].doc, runs[i].doc, sides, false); len(res.diffs) > 0 {
				return Comparison{}, &NotComparableError{Sides: sides, Runs: [2][2]int{{s, 0}, {s, i}}, Diffs: res.diffs}
			}
		}
	}
	// Two APIs are checked first: an embeddings run against another API is
	// refused for that, whatever else differs.
	var apis [2]string
	var notes []string
	if acrossAPI {
		for s, runs := range [2][]compareRun{old, new} {
			v, _ := lookup(runs[0].doc, apiKey)
			apis[s], _ = v.(string)
		}
		if apis[0] != apis[1] {
			var err error
			if notes, err = byDefinition(apis); err != nil {
				return Comparison{}, err
			}
		}
	}
	res := matchIdentity(old[0].doc, new[0].doc, sideName, acrossAPI)
	if len(res.diffs) > 0 {
		return Comparison{}, &NotComparableError{Sides: sideName, Runs: [2][2]int{{0, 0}, {1, 0}}, Diffs: res.diffs}
	}
	c := Comparison{OldRuns: len(old), NewRuns: len(new), Workload: res.shared, Unrecorded: res.unrecorded}
	if notes != nil {
		c.APIs, c.ByDefinition = apis, notes
	}
	c.Provenance = provenanceDiffs(old, new)
	for _, m := range comparedMetrics {
		c.Metrics = append(c.Metrics, compareMetric(m.key, m.name, m.unit, m.better, old, new))
	}
	return c, nil
}

// provenanceDiffs lists the setup keys whose value is not one value over
// all runs.
func provenanceDiffs(old, new []compareRun) []Difference {
	provs := [2][]map[string]string{}
	keys := map[string]bool{}
	for s, runs := range [2][]compareRun{old, new} {
		for _, r := range runs {
			p := provenanceOf(r.doc)
			provs[s] = append(provs[s], p)
			for k := range p {
				keys[k] = true
			}
		}
	}
	var out []Difference
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		d := Difference{Key: k}
		seen := map[string]bool{}
		for s := range provs {
			for _, p := range provs[s] {
				v, ok := p[k]
				if !ok {
					v = absent
				}
				seen[v] = true
				if s == 0 {
					d.Old = append(d.Old, v)
				} else {
					d.New = append(d.New, v)
				}
			}
		}
		if len(seen) > 1 {
			out = append(out, d)
		}
	}
	return out
}

// compareMetric compares one metric over the runs of both sides.
func compareMetric(key, name, unit, better string, old, new []compareRun) MetricDelta {
	d := MetricDelta{Name: name, Unit: unit, Better: better, DeltaPct: math.NaN(), P: math.NaN()}
	var rec [2][]float64
	for s, runs := range [2][]compareRun{old, new} {
		vals := make([]float64, len(runs))
		for i, r := range runs {
			vals[i] = math.NaN()
			if p := r.values[key]; p != nil && known(*p) {
				vals[i] = *p
				rec[s] = append(rec[s], *p)
			}
		}
		if s == 0 {
			d.Old = vals
		} else {
			d.New = vals
		}
	}
	d.OldCenter, d.NewCenter = median(rec[0]), median(rec[1])
	if known(d.OldCenter) && known(d.NewCenter) {
		switch {
		case d.OldCenter == d.NewCenter:
			d.DeltaPct = 0
		case d.OldCenter != 0:
			d.DeltaPct = (d.NewCenter/d.OldCenter - 1) * 100
		}
	}
	switch {
	case len(rec[0]) == 0 || len(rec[1]) == 0:
		d.Note = "not recorded on one or both sides"
	case len(rec[0]) < minRunsForSignificance || len(rec[1]) < minRunsForSignificance:
		d.Note = fmt.Sprintf("significance needs >= %d runs per side", minRunsForSignificance)
	default:
		th := benchmath.DefaultThresholds
		th.CompareAlpha = alpha
		cmp := benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(rec[0]), &th),
			benchmath.NewSample(slices.Clone(rec[1]), &th))
		d.Tested, d.P, d.Significant = true, cmp.P, cmp.P < alpha
		var notes []string
		for _, w := range cmp.Warnings {
			notes = append(notes, w.Error())
		}
		d.Note = strings.Join(notes, "; ")
	}
	return d
}

// WriteComparison prints c: the shared workload, provenance, and a table
// of the metrics with old and new (medians over runs), the delta and its
// significance ("~ (p=0.40, not significant)" when the test cannot tell
// the sides apart). Text read from the artifacts is printed Printable.
func WriteComparison(w io.Writer, c Comparison) error {
	var b strings.Builder
	fmt.Fprintf(&b, "old: %d run(s)  new: %d run(s)\n", c.OldRuns, c.NewRuns)
	b.WriteString("workload (identical on every run):")
	for _, kv := range c.Workload {
		b.WriteString(" " + Printable(kv))
	}
	b.WriteString("\n")
	if c.APIs[0] != c.APIs[1] {
		fmt.Fprintf(&b, "across APIs: old %s  new %s; by definition these differ:\n", Printable(c.APIs[0]), Printable(c.APIs[1]))
		for _, n := range c.ByDefinition {
			b.WriteString("  - " + n + "\n")
		}
	}
	if len(c.Unrecorded) > 0 {
		fmt.Fprintf(&b, "not recorded by these artifacts (older generation): %s\n", strings.Join(c.Unrecorded, ", "))
	}
	if len(c.Provenance) > 0 {
		b.WriteString("provenance (setup under test; differs, not refused):\n")
		for _, p := range c.Provenance {
			fmt.Fprintf(&b, "  %s: old %s  new %s\n", Printable(p.Key),
				Printable(strings.Join(p.Old, ", ")), Printable(strings.Join(p.New, ", ")))
		}
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\tunit\told\tnew\tdelta\tsignificance\t")
	for _, m := range c.Metrics {
		delta := "-"
		if known(m.DeltaPct) {
			delta = fmt.Sprintf("%+.1f%%", m.DeltaPct)
		}
		sig := m.Note
		if m.Tested {
			if m.Significant {
				sig = fmt.Sprintf("p=%.3f, significant (%s is better)", m.P, m.Better)
			} else {
				sig = fmt.Sprintf("~ (p=%.2f, not significant)", m.P)
				if m.Note != "" {
					sig += "; " + m.Note
				}
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", m.Name, m.Unit, fmtNum(m.OldCenter), fmtNum(m.NewCenter), delta, sig)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, PrintableLines(b.String()))
	return err
}

package reporters

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/stats"
)

// acrossRows are the metrics WriteAcross gives an interval for: those of a
// comparison, then the steady window's throughput.
var acrossRows = append(append([]struct{ key, name, unit, better string }(nil), comparedMetrics...),
	struct{ key, name, unit, better string }{"steady_output", "steady output", "tok/s", "higher"})

// WriteAcross prints, for every group of two or more of reps that ran one
// workload (the identity keys of a comparison, capacity/PROTOCOL.md#comparing-runs),
// the mean of each headline metric across the group's runs and its
// two-sided 95% t-interval (stats.TInterval95: mean ± t(0.975, n-1) s /
// sqrt(n)): benchstat's view of repeated runs. names label the runs (the
// files), in reps' order. A metric a run does not record is left out of
// that run's sample, and n says how many runs it has; fewer than two give
// no interval ("-"). Runs of a workload seen once print nothing.
func WriteAcross(w io.Writer, reps []*artifact.Report, names []string) error {
	if len(names) != len(reps) {
		return fmt.Errorf("reporters: across: %d names for %d runs", len(names), len(reps))
	}
	type group struct {
		runs  []compareRun
		names []string
	}
	var groups []*group
	for i, r := range reps {
		if r == nil {
			return fmt.Errorf("reporters: across: run %d: nil report", i+1)
		}
		c, err := compareRunOf(r)
		if err != nil {
			return fmt.Errorf("reporters: across: %s: %w", Printable(names[i]), err)
		}
		var g *group
		for _, h := range groups {
			if res := matchIdentity(h.runs[0].doc, c.doc, [2]string{"", ""}, false); len(res.diffs) == 0 {
				g = h
				break
			}
		}
		if g == nil {
			g = &group{}
			groups = append(groups, g)
		}
		g.runs, g.names = append(g.runs, c), append(g.names, names[i])
	}
	var buf bytes.Buffer
	for _, g := range groups {
		if len(g.runs) < 2 {
			continue
		}
		if buf.Len() > 0 {
			buf.WriteString("\n")
		}
		fmt.Fprintf(&buf, "== across %d runs of one workload: %s\n", len(g.runs), strings.Join(g.names, ", "))
		tw := tabwriter.NewWriter(&buf, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "metric\tunit\tn\tmean\tci95_low\tci95_high\tbetter\t\n")
		for _, m := range acrossRows {
			var xs []float64
			for _, r := range g.runs {
				if p := r.values[m.key]; p != nil && known(*p) {
					xs = append(xs, *p)
				}
			}
			mean, lo, hi := stats.TInterval95(xs)
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t\n", m.name, m.unit, len(xs), numNaN(mean), numNaN(lo), numNaN(hi), m.better)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		buf.WriteString("(95% t-interval of the mean across runs: mean ± t(0.975, n-1) · s / sqrt(n))\n")
	}
	_, err := w.Write([]byte(PrintableLines(buf.String())))
	return err
}

// numNaN is num of a value that is NaN when undefined.
func numNaN(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return num(&v)
}

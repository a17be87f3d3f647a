package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/reporters"
	"github.com/anvilbench/anvil/stats"
)

// writeAcross prints, for every group of two or more of reps that ran one
// workload (as compare judges it: reporters.Compare refuses no pair of
// them), the mean of each metric of a comparison across the group's runs
// and its two-sided 95% t-interval (stats.TInterval95: mean ± t(0.975,
// n-1) s / sqrt(n)): benchstat's view of repeated runs. names are the
// runs' files, in reps' order. A metric a run does not record is left out
// of that run's sample; n says how many runs have it, and fewer than two
// give no interval ("-"). A workload run once prints nothing.
func writeAcross(w io.Writer, reps []*artifact.Report, names []string) error {
	type group struct {
		reps  []*artifact.Report
		names []string
	}
	var groups []*group
	for i, r := range reps {
		var g *group
		for _, h := range groups {
			_, err := reporters.Compare(h.reps[:1], []*artifact.Report{r})
			if _, other := errors.AsType[*reporters.NotComparableError](err); err != nil && !other {
				return fmt.Errorf("%s: %w", names[i], err)
			}
			if err == nil {
				g = h
				break
			}
		}
		if g == nil {
			g = &group{}
			groups = append(groups, g)
		}
		g.reps, g.names = append(g.reps, r), append(g.names, names[i])
	}
	var b strings.Builder
	for _, g := range groups {
		if len(g.reps) < 2 {
			continue
		}
		c, err := reporters.Compare(g.reps[:1], g.reps)
		if err != nil {
			return err
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "== across %d runs of one workload: %s\n", len(g.reps), strings.Join(g.names, ", "))
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "metric\tunit\tn\tmean\tci95_low\tci95_high\tbetter\t\n")
		for _, m := range c.Metrics {
			var xs []float64
			for _, v := range m.New {
				if !math.IsNaN(v) && !math.IsInf(v, 0) {
					xs = append(xs, v)
				}
			}
			mean, lo, hi := stats.TInterval95(xs)
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t\n", m.Name, m.Unit, len(xs), cell(mean), cell(lo), cell(hi), m.Better)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		b.WriteString("(95% t-interval of the mean across runs: mean ± t(0.975, n-1) · s / sqrt(n))\n")
	}
	_, err := io.WriteString(w, reporters.PrintableLines(b.String()))
	return err
}

// cell formats a value with 4 significant digits (no exponent, every
// digit of a value of 1000 or more), "-" when undefined.
func cell(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	digits := 3
	if v != 0 {
		digits = max(0, 3-int(math.Floor(math.Log10(math.Abs(v)))))
	}
	return strconv.FormatFloat(v, 'f', digits, 64)
}

package reporters

import (
	"bytes"
	"fmt"
	"text/tabwriter"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// steadyRows are the headline metrics of anvil_go.steady.metrics, each
// beside the whole run's value of the same definition.
var steadyRows = []struct {
	label, unit   string
	window, whole func(r *artifact.Report, m *artifact.Steady) *float64
}{
	{"TTFT p50", "ms", func(_ *artifact.Report, m *artifact.Steady) *float64 { return m.TTFTP50MS },
		func(r *artifact.Report, _ *artifact.Steady) *float64 { return r.Metrics.TTFT.P50 }},
	{"TTFT p95", "ms", func(_ *artifact.Report, m *artifact.Steady) *float64 { return m.TTFTP95MS },
		func(r *artifact.Report, _ *artifact.Steady) *float64 { return r.Metrics.TTFT.P95 }},
	{"TTFO p50", "ms", func(_ *artifact.Report, m *artifact.Steady) *float64 { return m.TTFOP50MS },
		func(r *artifact.Report, _ *artifact.Steady) *float64 { return r.Metrics.TimeToFirstOutput.P50 }},
	{"TPOT p50", "ms", func(_ *artifact.Report, m *artifact.Steady) *float64 { return m.TPOTP50MS },
		func(r *artifact.Report, _ *artifact.Steady) *float64 { return r.Metrics.TPOT.P50 }},
	{"E2E p50", "ms", func(_ *artifact.Report, m *artifact.Steady) *float64 { return m.E2EP50MS },
		func(r *artifact.Report, _ *artifact.Steady) *float64 { return r.Metrics.E2E.P50 }},
	{"decode p50", "tok/s", func(_ *artifact.Report, m *artifact.Steady) *float64 { return m.DecodeTokSP50 },
		func(r *artifact.Report, _ *artifact.Steady) *float64 { return r.Metrics.DecodeTokS.P50 }},
	{"prefill p50", "tok/s", func(_ *artifact.Report, m *artifact.Steady) *float64 { return m.PrefillTokSP50 },
		func(r *artifact.Report, _ *artifact.Steady) *float64 {
			return r.Metrics.EffectivePrefillTokS.P50
		}},
	{"scheduled TTFT p50", "ms", func(_ *artifact.Report, m *artifact.Steady) *float64 { return m.ScheduledTTFTP50MS },
		func(r *artifact.Report, _ *artifact.Steady) *float64 {
			if sc := scheduledOf(r); sc != nil {
				return quantile(sc.ttft, .5)
			}
			return nil
		}},
	{"output", "tok/s", func(_ *artifact.Report, m *artifact.Steady) *float64 { return m.OutputTokS },
		func(r *artifact.Report, _ *artifact.Steady) *float64 { return throughputReported(r) }},
	{"completions", "req/s", func(_ *artifact.Report, m *artifact.Steady) *float64 { return m.CompletionsPerS },
		func(r *artifact.Report, _ *artifact.Steady) *float64 {
			if !(r.WallClockMS > 0) {
				return nil
			}
			return new(float64(r.Completed) / (r.WallClockMS / 1000))
		}},
}

// steadyLine is the one-line account of anvil_go.steady: the window and
// its load, or why the run has none; "" when the artifact has no member.
func steadyLine(r *artifact.Report) string {
	if r.AnvilGo == nil || r.AnvilGo.Steady == nil {
		return ""
	}
	st := r.AnvilGo.Steady
	if !st.Found {
		return "no steady window: " + orDashPtr(st.Reason)
	}
	line := fmt.Sprintf("steady window %s .. %s s of %s (bins of %s ms", seconds(*st.StartMS), seconds(*st.EndMS),
		seconds(r.WallClockMS), num(&st.BinMS))
	switch st.Load {
	case "in_flight":
		line += fmt.Sprintf("; %s in flight of %s", num(st.Achieved), num(st.Target))
	case "rate":
		line += fmt.Sprintf("; sent %s req/s of %s offered", num(st.Achieved), num(st.Target))
	}
	line += fmt.Sprintf("; Mann-Kendall z completions %s, TTFT %s)", num(st.CompletionsZ), num(st.TTFTZ))
	return line
}

// steadyWindowLine is the benchmark log's line of the window: its output
// throughput and TTFT beside the whole run's, or why there is none.
func steadyWindowLine(r *artifact.Report) string {
	line := steadyLine(r)
	if line == "" || !r.AnvilGo.Steady.Found {
		return line
	}
	m := r.AnvilGo.Steady
	return fmt.Sprintf("%s: output %s tok/s (whole run %s), TTFT p50 %s ms (%s)", line,
		num(m.OutputTokS), num(throughputReported(r)), num(m.TTFTP50MS), num(r.Metrics.TTFT.P50))
}

// writeSteady writes the summary's steady-state section: the line, then
// for a window its headline metrics beside the whole run's.
func writeSteady(buf *bytes.Buffer, r *artifact.Report) error {
	for _, line := range []string{warmupLine(r), probeLine(r)} {
		if line != "" {
			fmt.Fprintf(buf, "%s\n", line)
		}
	}
	line := steadyLine(r)
	if line == "" {
		return nil
	}
	fmt.Fprintf(buf, "%s\n", line)
	st := r.AnvilGo.Steady
	if !st.Found {
		return nil
	}
	m := st
	tw := tabwriter.NewWriter(buf, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "metric\tunit\twindow\twhole run\t\n")
	fmt.Fprintf(tw, "requests\t\t%s\t%d\t\n", intOrDash(m.Requests), r.Requests)
	for _, row := range steadyRows {
		w := row.window(r, m)
		if w == nil && row.label == "scheduled TTFT p50" {
			continue // a closed loop has no scheduled clock
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", row.label, row.unit, num(w), num(row.whole(r, m)))
	}
	return tw.Flush()
}

// seconds formats a millisecond offset in seconds, one decimal.
func seconds(ms float64) string { return fmt.Sprintf("%.1f", ms/1000) }

// orDashPtr is *s, or "-" when nil or empty.
func orDashPtr(s *string) string {
	if s == nil {
		return "-"
	}
	return orDash(*s)
}

// warmupLine says how the run warmed up (anvil_go.run.warmup): the rule,
// the requests and the time, and for a warm-up until steady whether it
// got there; "" without a warm-up.
func warmupLine(r *artifact.Report) string {
	if r.AnvilGo == nil || r.AnvilGo.Run == nil || r.AnvilGo.Run.Warmup == nil {
		return ""
	}
	run := r.AnvilGo.Run
	line := fmt.Sprintf("warm-up by %s: %s requests in %s s", Printable(*run.Warmup), intOrDash(run.WarmupRequests), secondsOf(run.WarmupMS))
	switch {
	case run.WarmupSteady == nil:
	case *run.WarmupSteady:
		line = fmt.Sprintf("warm-up until steady: %s requests in %s s, steady", intOrDash(run.WarmupRequests), secondsOf(run.WarmupMS))
	default:
		line = fmt.Sprintf("warm-up until steady: %s requests in %s s, never steady (stopped at its limit)", intOrDash(run.WarmupRequests), secondsOf(run.WarmupMS))
	}
	return line
}

// secondsOf is seconds of a nullable millisecond duration.
func secondsOf(ms *float64) string {
	if ms == nil {
		return "-"
	}
	return seconds(*ms)
}

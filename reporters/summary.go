package reporters

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strconv"
	"text/tabwriter"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// summaryRows are the distribution families shown by WriteSummary, in
// order, with their display names and units.
var summaryRows = []struct {
	label, unit string
	dist        func(m *artifact.Metrics) *artifact.Distribution
}{
	{"TTFT", "ms", func(m *artifact.Metrics) *artifact.Distribution { return &m.TTFT }},
	{"TTFO", "ms", func(m *artifact.Metrics) *artifact.Distribution { return &m.TimeToFirstOutput }},
	{"E2E", "ms", func(m *artifact.Metrics) *artifact.Distribution { return &m.E2E }},
	{"generation", "ms", func(m *artifact.Metrics) *artifact.Distribution { return &m.Generation }},
	{"TPOT", "ms", func(m *artifact.Metrics) *artifact.Distribution { return &m.TPOT }},
	{"decode", "tok/s", func(m *artifact.Metrics) *artifact.Distribution { return &m.DecodeTokS }},
	{"prefill (effective)", "tok/s", func(m *artifact.Metrics) *artifact.Distribution { return &m.EffectivePrefillTokS }},
	{"prompt tokens", "tok", func(m *artifact.Metrics) *artifact.Distribution { return &m.PromptTokensDist }},
	{completionLabel, "tok", func(m *artifact.Metrics) *artifact.Distribution { return &m.CompletionTokens }},
}

// completionLabel is the summary row of the rows' output_tokens when every
// one of them is a usage count; mixedOutputLabel when some row (an older
// artifact) holds a content-chunk count there instead.
const (
	completionLabel  = "completion tokens"
	mixedOutputLabel = "output (tokens or chunks)"
)

// summaryStats are the statistics columns of WriteSummary, headed by the
// statistic's name in the metrics keys.
var summaryStats = []struct {
	name string
	of   func(d *artifact.Distribution) *float64
}{
	{"p50", func(d *artifact.Distribution) *float64 { return d.P50 }},
	{"p95", func(d *artifact.Distribution) *float64 { return d.P95 }},
	{"p99", func(d *artifact.Distribution) *float64 { return d.P99 }},
	{"mean", func(d *artifact.Distribution) *float64 { return d.Mean }},
	{"mean_ci95_low", func(d *artifact.Distribution) *float64 { return d.MeanCI95Low }},
	{"mean_ci95_high", func(d *artifact.Distribution) *float64 { return d.MeanCI95High }},
}

// WriteSummary prints a console summary of r: identity, workload,
// population (failures by class of the requests sent; an interrupted run's
// never-sent requests counted apart), for an open loop the offered and
// achieved rates and the latencies from the scheduled time, a table of the
// latency and rate distributions (p50, p95, p99, mean and its 95%
// interval), throughput, the steady-state window with its headline
// metrics beside the whole run's (capacity/PROTOCOL.md#steady) and the
// contract checks. Values an artifact does not carry print as "-", so
// legacy artifacts summarize too. The p99 column is marked descriptive when
// the samples are too few for a tail estimate.
//
// Eligibility a legacy artifact does not record is derived
// (artifact.Report.Eligible) and marked so; throughput is shown only for an
// eligible run. The canary and controlled-output counts cover every
// checked response, the failed ones included. Every string read from the artifact is printed through
// Printable.
func WriteSummary(w io.Writer, r *artifact.Report) error {
	if r == nil {
		return fmt.Errorf("reporters: nil report")
	}
	var buf bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&buf, format, args...) }

	var wall *float64 // legacy artifacts have no wall_clock_ms
	if r.WallClockMS > 0 {
		wall = &r.WallClockMS
	}
	p("run %s  %s .. %s  wall %s ms\n", orDash(r.RunID), orDash(r.StartedAt), orDash(r.FinishedAt), num(wall))
	p("model %s  engine %s  gpu %s  protocol %s\n", orDash(r.Model), orDash(deref(r.Engine)),
		orDash(deref(r.GPU)), orDash(r.MeasurementProtocol))
	p("workload %s\n", workloadIdentity(r))
	ok, recorded := r.Eligible()
	eligible := strconv.FormatBool(ok)
	if !recorded {
		eligible += " (derived: not recorded)"
	}
	if unsent := r.UnsentRequests(); unsent > 0 {
		// The v1 document counts the never-sent requests as cancelled
		// failures; the server never saw them.
		p("requests %d  sent %d  succeeded %d  failed %d  never sent %d", r.Requests, r.SentRequests(), r.Completed,
			r.SentFailedRequests(), unsent)
	} else {
		p("requests %d  succeeded %d  failed %d", r.Requests, r.Completed, r.FailedRequests())
	}
	p("  performance eligible %s\n", eligible)
	if line := auditLine(r); line != "" {
		p("%s\n", line)
	}
	if run := runSummary(r); run != nil && run.AbsentTimings != nil {
		p("no times to a token: %s\n", *run.AbsentTimings)
	}
	if classes := failureClasses(r); classes != "" {
		p("failures %s\n", classes)
	}
	if line := arrivalLine(r); line != "" {
		p("%s\n", line)
	}
	if sc := scheduledOf(r); sc != nil {
		p("from the scheduled time (queue included): TTFT p50 %s  p95 %s  p99 %s ms  E2E p50 %s  p95 %s  p99 %s ms  queue p50 %s  p95 %s  max %s ms\n",
			num(quantile(sc.ttft, .5)), num(quantile(sc.ttft, .95)), num(quantile(sc.ttft, .99)),
			num(quantile(sc.e2e, .5)), num(quantile(sc.e2e, .95)), num(quantile(sc.e2e, .99)),
			num(quantile(sc.queue, .5)), num(quantile(sc.queue, .95)), num(quantile(sc.queue, 1)))
	}
	if note := contextWindowNote(r); note != "" {
		p("%s\n", note)
	}
	if w := promptPlanWarning(r); w != "" {
		p("prompts off plan: %s\n", w)
	}
	p("\n")

	tw := tabwriter.NewWriter(&buf, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "metric\tunit\tn\t")
	for _, s := range summaryStats {
		fmt.Fprintf(tw, "%s\t", s.name)
	}
	fmt.Fprintln(tw)
	for _, row := range summaryRows {
		d := row.dist(&r.Metrics)
		if row.label == completionLabel && !allUsage(r) {
			row.label, row.unit = mixedOutputLabel, "tok|chunk"
		}
		n := strconv.Itoa(d.Samples)
		if d.Samples == 0 && (d.P50 != nil || len(r.RequestTimings) == 0 && r.Completed > 0) {
			// A legacy artifact: percentiles without counts, or successful
			// requests without the rows that would say how many samples.
			n = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t", row.label, row.unit, n)
		for _, s := range summaryStats {
			fmt.Fprintf(tw, "%s\t", num(s.of(d)))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.MetricPopulation.P99Interpretation != "" {
		p("p99: %s (%d samples recommended)\n", orDash(r.MetricPopulation.P99Interpretation),
			r.MetricPopulation.P99MinimumRecommendedSamples)
	}

	if note := outputCountNote(r); note != "" {
		p("%s\n", note)
	}
	p("\n")

	m := &r.Metrics
	p("throughput %s output tok/s  output tokens %s  content chunks/s %s\n",
		num(throughputReported(r)), intOrDash(m.OutputTokens), num(m.ContentChunksPerSecond))
	if m.ThroughputTokS != nil && throughputReported(r) == nil {
		p("(the throughput the artifact records is not shown: the run is not performance eligible)\n")
	}
	if ct := chunkTiming(r); ct != nil {
		p("ITL p50 %s ms  p99 %s ms  max %s ms  stalls %d  tokens per chunk %s\n",
			num(&ct.ITLMS.P50), num(&ct.ITLMS.P99), num(&ct.ITLMS.Max), ct.Stalls, num(ct.TokensPerChunkMean))
	}
	if m.PrefixCacheHitAvg != nil {
		p("prefix cache hit %.1f%%\n", *m.PrefixCacheHitAvg*100)
	}
	if err := writeSteady(&buf, r); err != nil {
		return err
	}
	writeChecks(&buf, r)
	for _, line := range crossCheckLines(r) {
		p("%s\n", line)
	}
	_, err := w.Write([]byte(PrintableLines(buf.String())))
	return err
}

// failureClasses formats the failure count per class of the requests
// sent (Report.SentFailureClasses), sorted by class.
func failureClasses(r *artifact.Report) string {
	counts := r.SentFailureClasses()
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b []byte
	for i, k := range keys {
		if i > 0 {
			b = append(b, ' ')
		}
		b = fmt.Appendf(b, "%s=%d", Printable(k), counts[k])
	}
	return string(b)
}

// num formats a nullable value with fewer decimals the larger it is ("-"
// for null).
func num(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'f', decimals(*v), 64)
}

// decimals is the number of decimals shown for v: more for small values.
func decimals(v float64) int {
	switch a := max(v, -v); {
	case a >= 100:
		return 0
	case a >= 10:
		return 1
	case a >= 1:
		return 2
	default:
		return 3
	}
}

func intOrDash(v *int) string {
	if v == nil {
		return "-"
	}
	return strconv.Itoa(*v)
}

// orDash is s made Printable, or "-" when empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return Printable(s)
}

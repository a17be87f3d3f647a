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
	{"completion tokens", "tok", func(m *artifact.Metrics) *artifact.Distribution { return &m.CompletionTokens }},
}

// summaryStats are the statistics columns of WriteSummary.
var summaryStats = []artifact.Statistic{
	artifact.StatP50, artifact.StatP95, artifact.StatP99,
	artifact.StatMean, artifact.StatMeanCI95Low, artifact.StatMeanCI95High,
}

// WriteSummary prints a console summary of r: identity, workload,
// population (failures by class), a table of the latency and rate
// distributions (p50, p95, p99, mean and its 95% interval), throughput and
// the contract checks. Values an artifact does not carry print as "-", so
// legacy artifacts summarize too. The p99 column is marked descriptive when
// the samples are too few for a tail estimate.
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
	p("workload %s\n", WorkloadIdentity(r))
	eligible := "-" // artifacts older than metric_population do not say
	if r.PerformanceEligible || r.MetricPopulation.AttemptedRequests > 0 {
		eligible = strconv.FormatBool(r.PerformanceEligible)
	}
	p("requests %d  succeeded %d  failed %d  performance eligible %s\n",
		r.Requests, r.Completed, FailedRequests(r), eligible)
	if classes := failureClasses(r); classes != "" {
		p("failures %s\n", classes)
	}
	p("\n")

	tw := tabwriter.NewWriter(&buf, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "metric\tunit\tn\t")
	for _, s := range summaryStats {
		fmt.Fprintf(tw, "%s\t", s)
	}
	fmt.Fprintln(tw)
	for _, row := range summaryRows {
		d := row.dist(&r.Metrics)
		n := strconv.Itoa(d.Samples)
		if d.Samples == 0 && (d.P50 != nil || len(r.RequestTimings) == 0 && r.Completed > 0) {
			// A legacy artifact: percentiles without counts, or successful
			// requests without the rows that would say how many samples.
			n = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t", row.label, row.unit, n)
		for _, s := range summaryStats {
			fmt.Fprintf(tw, "%s\t", num(d.Get(s)))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.MetricPopulation.P99Interpretation != "" {
		p("p99: %s (%d samples recommended)\n", r.MetricPopulation.P99Interpretation,
			r.MetricPopulation.P99MinimumRecommendedSamples)
	}
	p("\n")

	m := &r.Metrics
	p("throughput %s output tok/s  output tokens %s  content chunks/s %s\n",
		num(m.ThroughputTokS), intOrDash(m.OutputTokens), num(m.ContentChunksPerSecond))
	if ct := chunkTiming(r); ct != nil {
		p("ITL p50 %s ms  p99 %s ms  max %s ms  stalls %d  tokens per chunk %s\n",
			num(&ct.ITLMS.P50), num(&ct.ITLMS.P99), num(&ct.ITLMS.Max), ct.Stalls, num(ct.TokensPerChunkMean))
	}
	if m.PrefixCacheHitAvg != nil {
		p("prefix cache hit %.1f%%\n", *m.PrefixCacheHitAvg*100)
	}
	if m.RequestCanarySamples > 0 {
		p("request canaries %d/%d passed\n", m.RequestCanaryPassed, m.RequestCanarySamples)
	}
	if m.ControlledOutputSamples > 0 {
		p("controlled output (%s) exact %d/%d, unobservable %d, rate %s\n", orDash(r.ControlledOutputPolicy),
			m.ControlledOutputExactAdherence, m.ControlledOutputSamples,
			m.ControlledOutputUnobservable, num(m.ControlledOutputExactAdherenceRate))
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// failureClasses formats the failure count per class, sorted by class.
func failureClasses(r *artifact.Report) string {
	counts := map[string]int{}
	for _, f := range r.Failures {
		c := string(f.FailureClass)
		if c == "" {
			c = orDash(f.ErrorType)
		}
		counts[c]++
	}
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
		b = fmt.Appendf(b, "%s=%d", k, counts[k])
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

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

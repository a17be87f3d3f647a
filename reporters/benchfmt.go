// Package reporters presents capacity reports: the Go benchmark format for
// benchstat (NewBenchWriter and BenchResult, whose units are a small
// stable set listed in package anviltest), the console summary
// (WriteSummary), the log lines of a finished run (RunLog), the HTML report
// (WriteHTML), the comparison of two sets of runs (Compare,
// WriteComparison) and the identity lines printed before a benchmark's
// results (WriteIdentity). Reporters are plain functions of an
// *artifact.Report; package artifact reads and writes the JSON file and
// states the facts of a report (sent, failed, eligible) as its methods.
//
// Text read from an artifact or a server can hold terminal controls;
// every reporter prints it through Printable (one line) or PrintableLines
// (its lines kept), as should any caller that prints such text itself.
package reporters

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// The benchmark units of a capacity run: a small, stable set, valid benchfmt
// units (no spaces, no "ns" or "MB" that benchfmt would rescale). Each is one
// statistic of the v1 metrics object; a null statistic is omitted, never
// written as NaN. Latency units are medians (p50) over the successful
// requests unless the name says otherwise.
const (
	// unitNsPerOp is the run's wall time (drain included) per measured
	// request sent: wall_clock_ms * 1e6 / Report.SentRequests.
	unitNsPerOp = "ns/op"
	// unitTTFTP50 is ttft_p50_ms: time to the first visible content.
	unitTTFTP50 = "ttft-p50-ms"
	// unitTTFTP95 is ttft_p95_ms.
	unitTTFTP95 = "ttft-p95-ms"
	// unitTTFOP50 is time_to_first_output_p50_ms: time to the first
	// reasoning or content output.
	unitTTFOP50 = "ttfo-p50-ms"
	// unitTPOT is tpot_p50_ms (legacy artifacts:
	// mean_inter_token_latency_ms_p50): generation time per decode token.
	unitTPOT = "tpot-ms"
	// unitDecode is decode_tok_s_p50: per-request decode rate.
	unitDecode = "decode-tok/s"
	// unitPrefill is effective_prefill_tok_s_p50: prompt tokens per second
	// of time to first output (queueing and cached tokens included).
	unitPrefill = "prefill-tok/s"
	// unitE2EP50 is e2e_p50_ms: request start to end of stream.
	unitE2EP50 = "e2e-p50-ms"
	// unitOutputThroughput is throughput_tok_s: output tokens per wall
	// second of the whole run; only for performance-eligible runs (see
	// Report.Eligible), never for a run with a failure.
	unitOutputThroughput = "output-tok/s"
	// unitCacheHit is prefix_cache_hit_avg as a percentage.
	unitCacheHit = "cache-hit-%"
	// unitFailed is the number of requests sent that failed (excluded from
	// every latency): Report.SentFailedRequests. Requests never sent are
	// unitUnsent.
	unitFailed = "failed-req"
	// unitITLP99 is anvil_go.chunk_timing.itl_ms.p99: the 99th percentile
	// of the gaps between output chunks over all successful requests.
	unitITLP99 = "itl-p99-ms"
	// unitTokensPerChunk is anvil_go.chunk_timing.tokens_per_chunk_mean:
	// usage completion tokens per output chunk.
	unitTokensPerChunk = "tokens/chunk"
	// unitGoodput is anvil_go.slo.goodput_rps: requests meeting the run's
	// SLO per wall second. Written only for runs evaluated against an SLO.
	unitGoodput = "goodput-req/s"
	// unitJoulesPerOutputToken is anvil_go.energy.joules_per_output_token:
	// the GPUs' energy over the phase per output token
	// (capacity/PROTOCOL.md#energy). Written only for runs with GPU
	// metrics.
	unitJoulesPerOutputToken = "J/output-tok"
)

// unitMeta is the benchfmt unit metadata written once per file.
var unitMeta = []struct{ unit, key, value string }{
	{unitTTFTP50, "better", "lower"},
	{unitTTFTP95, "better", "lower"},
	{unitTTFOP50, "better", "lower"},
	{unitTPOT, "better", "lower"},
	{unitDecode, "better", "higher"},
	{unitPrefill, "better", "higher"},
	{unitE2EP50, "better", "lower"},
	{unitOutputThroughput, "better", "higher"},
	{unitCacheHit, "better", "higher"},
	{unitFailed, "better", "lower"},
	{unitITLP99, "better", "lower"},
	{unitTokensPerChunk, "better", "higher"},
	// A failure count is a count, not a noisy measurement.
	{unitFailed, "assume", "exact"},
	{unitUnsent, "better", "lower"},
	{unitUnsent, "assume", "exact"},
}

// benchValues returns the benchmark values of r in the stable unit order,
// leaving out every null statistic. Legacy artifacts yield the subset they
// carry.
func benchValues(r *artifact.Report) []benchfmt.Value {
	var vs []benchfmt.Value
	add := func(unit string, v *float64) {
		if v != nil && !isNaNOrInf(*v) {
			vs = append(vs, benchfmt.Value{Value: *v, Unit: unit})
		}
	}
	m := &r.Metrics
	if sent := r.SentRequests(); sent > 0 && r.WallClockMS > 0 {
		ns := r.WallClockMS * 1e6 / float64(sent)
		add(unitNsPerOp, &ns)
	}
	add(unitTTFTP50, m.TTFT.P50)
	add(unitTTFTP95, m.TTFT.P95)
	add(unitTTFOP50, m.TimeToFirstOutput.P50)
	if m.TPOT.P50 != nil {
		add(unitTPOT, m.TPOT.P50)
	} else {
		add(unitTPOT, m.MeanInterTokenLatencyMS.P50)
	}
	add(unitDecode, m.DecodeTokS.P50)
	add(unitPrefill, m.EffectivePrefillTokS.P50)
	add(unitE2EP50, m.E2E.P50)
	add(unitOutputThroughput, throughputReported(r))
	if m.PrefixCacheHitAvg != nil {
		pct := *m.PrefixCacheHitAvg * 100
		add(unitCacheHit, &pct)
	}
	failed := float64(r.SentFailedRequests())
	add(unitFailed, &failed)
	if unsent := float64(r.UnsentRequests()); unsent > 0 {
		add(unitUnsent, &unsent)
	}
	if ct := chunkTiming(r); ct != nil {
		add(unitITLP99, &ct.ITLMS.P99)
		add(unitTokensPerChunk, ct.TokensPerChunkMean)
	}
	if sc := scheduledOf(r); sc != nil {
		add(unitSchedTTFTP50, quantile(sc.ttft, .5))
		add(unitSchedTTFTP95, quantile(sc.ttft, .95))
		add(unitSchedE2EP50, quantile(sc.e2e, .5))
	}
	if slo := sloOf(r); slo != nil {
		add(unitGoodput, &slo.GoodputRPS)
	}
	if r.AnvilGo != nil && r.AnvilGo.Energy != nil {
		add(unitJoulesPerOutputToken, r.AnvilGo.Energy.JoulesPerOutputToken)
	}
	return vs
}

func isNaNOrInf(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }

// goTestRounded is v as go test prints a benchmark metric: the testing
// package writes every value with a number of decimals that depends on
// its magnitude (four significant digits below 1000, none from 999.95 on,
// testing.BenchmarkResult.String), and benchstat compares what it reads.
// A .bench file or a converted artifact that kept every digit
// (18.480492813141684 beside go test's 18.48) would make the same run
// look like a significant change in a table that mixes the two, so
// every value is rounded the same way; rounding again changes nothing.
func goTestRounded(v float64) float64 {
	decimals := 7
	switch y := math.Abs(v); {
	case y == 0 || y >= 999.95:
		decimals = 0
	case y >= 99.995:
		decimals = 1
	case y >= 9.9995:
		decimals = 2
	case y >= 0.99995:
		decimals = 3
	case y >= 0.099995:
		decimals = 4
	case y >= 0.0099995:
		decimals = 5
	case y >= 0.00099995:
		decimals = 6
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'f', decimals, 64), 64)
	if err != nil {
		return v // cannot happen: FormatFloat writes a number
	}
	return r
}

// benchName is the benchmark name BenchResult gives r: the name go test
// printed for the benchmark that made the run (anvil_go.run.benchmark,
// recorded by anviltest), so that a converted artifact and the go test
// line of the same run share one benchstat row; else, or when the recorded
// name is not a valid benchmark name,
// BenchmarkCapacity/ctx=<context tokens or "sampled">/conc=<concurrency>,
// followed for an open-loop run (without a recorded name) by
// /rate=<requests per second>; a trace replay is
// BenchmarkCapacity/trace=<file>/conc=<concurrency>, sessions
// BenchmarkCapacity/sessions=<spec>/conc=<concurrency>.
func benchName(r *artifact.Report) string {
	if run := runSummary(r); run != nil && run.Benchmark != nil && validBenchName(*run.Benchmark) {
		return *run.Benchmark
	}
	ctx := "sampled"
	if r.ContextTokens != nil {
		ctx = strconv.Itoa(*r.ContextTokens)
	}
	switch w := workloadOf(r); {
	case w != nil && w.Kind == artifact.WorkloadTrace && w.Trace != nil:
		return fmt.Sprintf("BenchmarkCapacity/trace=%s/conc=%d", nameValue(w.Trace.File), r.Concurrency)
	case w != nil && w.Kind == artifact.WorkloadSessions && w.Sessions != nil:
		spec := "recorded"
		if w.Sessions.Spec != nil {
			spec = *w.Sessions.Spec
		}
		return fmt.Sprintf("BenchmarkCapacity/sessions=%s/conc=%d", nameValue(spec), r.Concurrency)
	}
	name := fmt.Sprintf("BenchmarkCapacity/ctx=%s/conc=%d", ctx, r.Concurrency)
	if a := arrivalOf(r); a != nil {
		name += "/rate=" + formatFloat(a.RateRPS)
	}
	return name
}

// workloadOf is r's anvil_go.workload, nil for a synthetic run.
func workloadOf(r *artifact.Report) *artifact.Workload {
	if r.AnvilGo == nil {
		return nil
	}
	return r.AnvilGo.Workload
}

// nameValue is v as one part of a benchmark name: no space, no slash,
// nothing Printable would escape.
func nameValue(v string) string {
	return strings.Map(func(c rune) rune {
		if c == ' ' || c == '/' || Printable(string(c)) != string(c) {
			return '_'
		}
		return c
	}, v)
}

// arrivalOf is r's anvil_go.arrival, nil for a closed-loop run.
func arrivalOf(r *artifact.Report) *artifact.Arrival {
	if r.AnvilGo == nil {
		return nil
	}
	return r.AnvilGo.Arrival
}

// sloOf is r's anvil_go.slo, nil when no SLO was evaluated.
func sloOf(r *artifact.Report) *artifact.SLOResult {
	if r.AnvilGo == nil {
		return nil
	}
	return r.AnvilGo.SLO
}

// promptSizingReference is anvil_go.prompt_sizing.method of prompts sized
// as the reference tool sizes them (and of every artifact without the
// member), which the workload identity leaves implicit.
const promptSizingReference = "reference"

// promptSizingOf is r's anvil_go.prompt_sizing, nil when not recorded.
func promptSizingOf(r *artifact.Report) *artifact.PromptSizing {
	if r.AnvilGo == nil {
		return nil
	}
	return r.AnvilGo.PromptSizing
}

// formatFloat writes v in the shortest form that reads back exactly.
func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// Benchfmt configuration keys. They carry identity only, the values that
// must match for two results to be compared; per-run values (run ids,
// dates, base URLs) would split every benchstat table and are never written.
const (
	configModel    = "model"    // the served model id
	configEngine   = "engine"   // the serving engine, as recorded
	configGPU      = "gpu"      // the accelerator, as recorded
	configProtocol = "protocol" // measurement_protocol
	configWorkload = "workload" // workloadIdentity
	// configEligible is performance_eligible ("true" or "false"): a run in
	// which a request failed or was cancelled lands in its own benchstat
	// table instead of mixing with complete runs (`benchstat -ignore
	// eligible` compares them anyway). Legacy artifacts, which do not
	// record it, get the value Report.Eligible derives from their counts.
	configEligible = "eligible"
	// configVersion and configRevision are the version and the commit of
	// this module in the binary that made the run (anvil_go.run
	// module_version and vcs_revision, "(modified)" added for a checkout
	// with uncommitted changes; package anviltest's Main prints the same
	// keys before the benchmarks): runs measured by different builds of
	// the tool are not silently compared (benchstat -ignore
	// anvil-version,anvil-revision compares them anyway). Empty for an
	// artifact that does not record them.
	configVersion  = "anvil-version"
	configRevision = "anvil-revision"
)

// benchConfig returns the file-level configuration of r in key order
// model, engine, gpu, protocol, workload, eligible, anvil-version,
// anvil-revision. Every key is written;
// an unknown (null or empty) value is written empty, which in benchfmt
// clears the key, so a file concatenated after another never inherits
// the other's identity. Values are one line, made Printable.
func benchConfig(r *artifact.Report) []benchfmt.Config {
	cs := make([]benchfmt.Config, 0, 8)
	add := func(key, value string) {
		cs = append(cs, benchfmt.Config{Key: key, Value: []byte(configValue(value)), File: true})
	}
	add(configModel, r.Model)
	add(configEngine, deref(r.Engine))
	add(configGPU, deref(r.GPU))
	add(configProtocol, r.MeasurementProtocol)
	add(configWorkload, workloadIdentity(r))
	eligible, _ := r.Eligible()
	add(configEligible, strconv.FormatBool(eligible))
	version, revision := runSummary(r).BuildLabels()
	add(configVersion, version)
	add(configRevision, revision)
	return cs
}

// workloadIdentity summarizes the workload fields of r that must match for
// two runs to be comparable (capacity/PROTOCOL.md#comparing, less the request count, which
// a time-based run does not fix): the API when it is not chat (api=responses),
// context, served context, concurrency, max
// tokens, burst, prompt cache mode, shared prefix, thinking, response words
// and policy, canaries, the fields Target.ExtraBody merged into every
// request body (extra-body={"cache_prompt":false}); for an open-loop run
// the arrival process, rate and burstiness (so it never compares as a
// closed-loop run); for a trace
// replay the trace (trace=<file>, its SHA-256, rows and the replay
// options), for sessions their spec, count and users; for a run judged
// against an SLO its bounds and attainment (goodput means nothing across
// different SLOs). Fields a legacy artifact lacks are left out; a closed-loop
// run without an SLO has none of the open-loop parts.
func workloadIdentity(r *artifact.Report) string {
	var parts []string
	add := func(k, v string) { parts = append(parts, k+"="+v) }
	if api := artifact.APIOf(r); api != artifact.APIChat {
		add("api", api)
	}
	if r.ContextTokens != nil {
		add("ctx", strconv.Itoa(*r.ContextTokens))
	} else {
		add("ctx", "sampled")
	}
	if r.MaxContextTokens != nil {
		add("served-ctx", strconv.Itoa(*r.MaxContextTokens))
	}
	add("conc", strconv.Itoa(r.Concurrency))
	add("max-tokens", strconv.Itoa(r.MaxTokens))
	if r.ServeFlags.SharedPrefixBurst {
		add("burst", "true")
	}
	if r.PromptCacheMode != "" {
		add("cache", r.PromptCacheMode)
		add("prefix", strconv.Itoa(r.SharedPrefixTokens))
	}
	if r.ServeFlags.ThinkingMode != "" {
		add("thinking", r.ServeFlags.ThinkingMode)
	}
	if r.ServeFlags.ReasoningEffort != nil {
		add("effort", *r.ServeFlags.ReasoningEffort)
	}
	if r.ResponseWords > 0 {
		add("words", strconv.Itoa(r.ResponseWords))
		add("policy", r.ControlledOutputPolicy)
	}
	if r.RequestCanaries {
		add("canaries", "true")
	}
	if ps := promptSizingOf(r); ps != nil && ps.Method != "" && ps.Method != promptSizingReference {
		add("sizing", ps.Method)
	}
	if body := extraBodyOf(r); body != "" {
		add("extra-body", body)
	}
	if a := arrivalOf(r); a != nil {
		add("arrival", a.Process)
		add("rate", formatFloat(a.RateRPS))
		if a.Burstiness != nil && a.Process != "poisson" {
			add("burstiness", formatFloat(*a.Burstiness))
		}
	}
	if w := workloadOf(r); w != nil {
		addWorkload(add, w)
	}
	if slo := sloOf(r); slo != nil {
		for _, b := range []struct {
			key   string
			bound *float64
		}{{"slo-ttft-ms", slo.TTFTMS}, {"slo-tpot-ms", slo.TPOTMS}, {"slo-e2e-ms", slo.E2EMS}} {
			if b.bound != nil {
				add(b.key, formatFloat(*b.bound))
			}
		}
		add("slo-attainment", formatFloat(slo.Attainment))
	}
	return Printable(strings.Join(parts, " "))
}

// addWorkload adds the identity of a trace replay (trace=<file>, its
// SHA-256 and the replay options) or of sessions (sessions=<spec>, their
// count and users) to a workload identity.
func addWorkload(add func(k, v string), w *artifact.Workload) {
	if t := w.Trace; t != nil {
		add("trace", nameValue(t.File))
		add("trace-sha256", t.SHA256)
		add("trace-format", t.Format)
		add("trace-rows", strconv.Itoa(t.Rows))
		add("speed-up", formatFloat(t.SpeedUp))
		if t.WindowStartMS != 0 || t.WindowEndMS != nil {
			end := ""
			if t.WindowEndMS != nil {
				end = formatFloat(*t.WindowEndMS)
			}
			add("window-ms", formatFloat(t.WindowStartMS)+".."+end)
		}
		if t.First > 0 {
			add("first", strconv.Itoa(t.First))
		}
	}
	if s := w.Sessions; s != nil {
		spec := "recorded"
		if s.Spec != nil {
			spec = *s.Spec
		}
		add("sessions", nameValue(spec))
		add("sessions-count", strconv.Itoa(s.Sessions))
		if s.Users != nil {
			add("users", strconv.Itoa(*s.Users))
		}
	}
}

// validBenchName reports whether name is a benchmark name benchfmt reads
// back as written: "Benchmark" and then no space and nothing Printable
// would escape.
func validBenchName(name string) bool {
	return strings.HasPrefix(name, "Benchmark") && !strings.ContainsRune(name, ' ') && Printable(name) == name
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

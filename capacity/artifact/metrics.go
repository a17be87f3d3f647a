package artifact

// Distribution is one metric family summarized over the successful rows
// (stats.Summarize). Samples is never null; a statistic is nil when it is
// undefined (every one at 0 samples; Stddev and the CI bounds at 1) or when
// a legacy artifact wrote null.
type Distribution struct {
	Samples      int      // "<family>_samples"
	Mean         *float64 // "<family>_mean"
	Stddev       *float64 // "<family>_stddev": sample standard deviation (n-1)
	MeanCI95Low  *float64 // "<family>_mean_ci95_low": mean - stats.Z95*stddev/sqrt(n)
	MeanCI95High *float64 // "<family>_mean_ci95_high": mean + stats.Z95*stddev/sqrt(n)
	Min          *float64 // "<family>_min"
	P25          *float64 // "<family>_p25": nearest rank
	P50          *float64 // "<family>_p50"
	P75          *float64 // "<family>_p75"
	P90          *float64 // "<family>_p90"
	P95          *float64 // "<family>_p95"
	P99          *float64 // "<family>_p99"
	Max          *float64 // "<family>_max"
}

// Metrics is the flat "metrics" object: the 11 distribution families plus
// the run scalars. The JSON keys of a family follow one naming rule (see
// family.Key): families measured in ms put the statistic before "_ms"
// ("ttft_p50_ms"), "_samples" never takes the unit, unitless families append
// the statistic ("decode_tok_s_p50").
type Metrics struct {
	// Distribution families, in the order of families (their keys: family.Key).
	CompletionTokens        Distribution // "completion_tokens_*": rows' output_tokens
	PromptTokensDist        Distribution // "prompt_tokens_*"
	DecodeTokS              Distribution // "decode_tok_s_*"
	EffectivePrefillTokS    Distribution // "effective_prefill_tok_s_*"
	MeanInterTokenLatencyMS Distribution // "mean_inter_token_latency_ms_*" (unitless naming)
	E2E                     Distribution // "e2e_*_ms"
	Generation              Distribution // "generation_*_ms"
	MeanTimePerOutputToken  Distribution // "mean_time_per_output_token_*_ms"
	TimeToFirstOutput       Distribution // "time_to_first_output_*_ms"
	TPOT                    Distribution // "tpot_*_ms"
	TTFT                    Distribution // "ttft_*_ms"

	// OutputTokens is "output_tokens": the sum of rows' output tokens; nil
	// when any row's source is not SourceUsage.
	OutputTokens *int
	// PromptTokens is "prompt_tokens": the sum of non-null row prompt
	// tokens; nil when there are none.
	PromptTokens       *int
	PromptTokenSamples int // "prompt_token_samples": rows with prompt tokens
	ContentChunks      int // "content_chunks": sum over rows
	ReasoningChunks    int // "reasoning_chunks": sum over rows
	// ContentChunksPerSecond is "content_chunks_s": content chunks per wall
	// second, only when OutputTokens is nil (tokens not exact).
	ContentChunksPerSecond *float64
	// ThroughputTokS is "throughput_tok_s": output tokens per wall second,
	// only when ThroughputPerformanceEligible.
	ThroughputTokS *float64
	// ThroughputPerformanceEligible is "throughput_performance_eligible":
	// the run is performance eligible, OutputTokens is known and wall > 0.
	ThroughputPerformanceEligible bool
	// OutputTokenSources is "output_token_sources": rows per source.
	OutputTokenSources map[OutputTokenSource]int
	// PrefixCacheHitAvg is "prefix_cache_hit_avg": mean cached/prompt tokens
	// over responses reporting cached tokens. Not derivable from the rows;
	// Recompute keeps the recorded value.
	PrefixCacheHitAvg    *float64
	RequestCanarySamples int // "request_canary_samples": rows with a canary
	RequestCanaryPassed  int // "request_canary_passed"
	// ControlledOutputSamples is "controlled_output_samples": rows with a
	// controlled-output check.
	ControlledOutputSamples int
	// ControlledOutputUnobservable is "controlled_output_unobservable":
	// checks whose exact adherence is null.
	ControlledOutputUnobservable int
	// ControlledOutputExactAdherence is "controlled_output_exact_adherence":
	// checks with exact adherence true.
	ControlledOutputExactAdherence int
	// ControlledOutputExactAdherenceRate is
	// "controlled_output_exact_adherence_rate": exact / (samples -
	// unobservable); nil when that is 0.
	ControlledOutputExactAdherenceRate *float64

	shape shape
}

// family describes one distribution family of Metrics.
type family struct {
	// Name is the key prefix ("ttft", "decode_tok_s").
	Name string
	// Unit is "ms" for families whose statistics carry the "_ms" suffix,
	// else "".
	Unit string
	// Of returns the family's Distribution inside m.
	Of func(m *Metrics) *Distribution
}

// families lists the 11 distribution families of the v1 metrics object,
// in key-table order.
var families = [...]family{
	{"completion_tokens", "", func(m *Metrics) *Distribution { return &m.CompletionTokens }},
	{"prompt_tokens", "", func(m *Metrics) *Distribution { return &m.PromptTokensDist }},
	{"decode_tok_s", "", func(m *Metrics) *Distribution { return &m.DecodeTokS }},
	{"effective_prefill_tok_s", "", func(m *Metrics) *Distribution { return &m.EffectivePrefillTokS }},
	{"mean_inter_token_latency_ms", "", func(m *Metrics) *Distribution { return &m.MeanInterTokenLatencyMS }},
	{"e2e", "ms", func(m *Metrics) *Distribution { return &m.E2E }},
	{"generation", "ms", func(m *Metrics) *Distribution { return &m.Generation }},
	{"mean_time_per_output_token", "ms", func(m *Metrics) *Distribution { return &m.MeanTimePerOutputToken }},
	{"time_to_first_output", "ms", func(m *Metrics) *Distribution { return &m.TimeToFirstOutput }},
	{"tpot", "ms", func(m *Metrics) *Distribution { return &m.TPOT }},
	{"ttft", "ms", func(m *Metrics) *Distribution { return &m.TTFT }},
}

// statistic names one statistic of a Distribution, as it appears in keys.
type statistic string

// The statistics of a distribution family.
const (
	statSamples      statistic = "samples"
	statMean         statistic = "mean"
	statStddev       statistic = "stddev"
	statMeanCI95Low  statistic = "mean_ci95_low"
	statMeanCI95High statistic = "mean_ci95_high"
	statMin          statistic = "min"
	statP25          statistic = "p25"
	statP50          statistic = "p50"
	statP75          statistic = "p75"
	statP90          statistic = "p90"
	statP95          statistic = "p95"
	statP99          statistic = "p99"
	statMax          statistic = "max"
)

// statistics lists every statistic in key-table order; statSamples first.
var statistics = [...]statistic{
	statSamples, statMean, statStddev, statMeanCI95Low, statMeanCI95High, statMin,
	statP25, statP50, statP75, statP90, statP95, statP99, statMax,
}

// Key is the metrics key of statistic s of the family: the one naming rule.
func (f family) Key(s statistic) string {
	if f.Unit == "" || s == statSamples {
		return f.Name + "_" + string(s)
	}
	return f.Name + "_" + string(s) + "_" + f.Unit
}

// field returns the pointer holding statistic s of d (nil for statSamples).
func (d *Distribution) field(s statistic) **float64 {
	switch s {
	case statMean:
		return &d.Mean
	case statStddev:
		return &d.Stddev
	case statMeanCI95Low:
		return &d.MeanCI95Low
	case statMeanCI95High:
		return &d.MeanCI95High
	case statMin:
		return &d.Min
	case statP25:
		return &d.P25
	case statP50:
		return &d.P50
	case statP75:
		return &d.P75
	case statP90:
		return &d.P90
	case statP95:
		return &d.P95
	case statP99:
		return &d.P99
	case statMax:
		return &d.Max
	}
	return nil
}

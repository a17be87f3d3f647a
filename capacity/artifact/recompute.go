package artifact

import (
	"errors"
	"fmt"
	"math"

	"github.com/anvilbench/anvil/stats"
)

// P99MinimumSamples is the sample count from which a nearest-rank p99 is
// read as a tail estimate; below it the p99 is descriptive only.
const P99MinimumSamples = 100

// p99 interpretations written in metric_population.
const (
	p99TailEstimate = "tail-estimate"
	p99Descriptive  = "descriptive-nearest-rank-only"
)

// failurePolicy is the fixed metric_population.failure_policy sentence.
const failurePolicy = "failed or contract-invalid responses keep their sanitized timing and metadata in failures but never enter a performance distribution"

// p99Families are the families metric_population reports p99 sample
// counts for, by index into families; each is named there by its
// family.Name.
var p99Families = [...]int{famDecodeTokS, famE2E, famEffectivePrefill, famTPOT, famTTFT}

// Recompute derives Metrics, MetricPopulation, PerformanceEligible and
// MeasurementProtocol from RequestTimings, Failures, Requests and
// WallClockMS (capacity/PROTOCOL.md#timings); a run whose exact prompt
// sizing missed its plan (PromptSizing.OffPlan) is not eligible. Metrics.PrefixCacheHitAvg keeps its
// recorded value: the rows lack the cached-token counts it needs. A
// recorded failure_policy sentence is kept; an empty one becomes
// failurePolicy. The protocol of artifacts older than capacity-v3 is kept.
//
// It fails, changing nothing, when the report has no request_timings or
// wall_clock_ms (legacy and capacity-v2 artifacts, whose metrics cannot be
// derived), when a row breaks 0 <= TTFO <= TTFT <= E2E or holds a
// non-finite or negative value, or when a statistic overflows float64.
func (r *Report) Recompute() error {
	for _, k := range []string{"request_timings", "wall_clock_ms"} {
		if !r.shape.has(k) {
			return fmt.Errorf("capacity: recompute: the report has no %s (an artifact older than capacity-v3); its metrics cannot be derived", k)
		}
	}
	if math.IsNaN(r.WallClockMS) || math.IsInf(r.WallClockMS, 0) || r.WallClockMS < 0 {
		return fmt.Errorf("capacity: recompute: wall_clock_ms %v, want a finite duration >= 0", r.WallClockMS)
	}
	if r.Requests < 0 {
		return fmt.Errorf("capacity: recompute: requests %d, want >= 0", r.Requests)
	}
	for i := range r.RequestTimings {
		if err := r.RequestTimings[i].Check(); err != nil {
			return fmt.Errorf("capacity: recompute: request_timings[%d]: %w", i, err)
		}
	}
	m := r.Metrics // copies the recorded shape and prefix_cache_hit_avg
	if err := m.derive(r.RequestTimings); err != nil {
		return fmt.Errorf("capacity: recompute: %w", err)
	}
	keepUnderivable(&m, &r.Metrics, r.RequestTimings)

	// An exact prompt sizing that missed its plan measured other prompts
	// than planned (capacity/PROTOCOL.md#plan-check).
	eligible := len(r.RequestTimings) == r.Requests && len(r.Failures) == 0 &&
		(r.AnvilGo == nil || !r.AnvilGo.PromptSizing.OffPlan())
	wallS := r.WallClockMS / 1000
	m.ThroughputPerformanceEligible = eligible && m.OutputTokens != nil && wallS > 0
	m.ThroughputTokS, m.ContentChunksPerSecond = nil, nil
	if m.ThroughputPerformanceEligible {
		m.ThroughputTokS = new(float64(*m.OutputTokens) / wallS)
	}
	if m.OutputTokens == nil && wallS > 0 {
		m.ContentChunksPerSecond = new(float64(m.ContentChunks) / wallS)
	}

	p := r.MetricPopulation // keeps the recorded shape
	p.AttemptedRequests = r.Requests
	p.SuccessfulRequests = len(r.RequestTimings)
	p.PerformanceEligibleRequests = len(r.RequestTimings)
	p.ExcludedRequests = len(r.Failures)
	p.AggregateThroughputEligible = m.ThroughputPerformanceEligible
	p.P99MinimumRecommendedSamples = P99MinimumSamples
	p.P99Interpretation = p99Interpretation(len(r.RequestTimings))
	p.P99InterpretationByMetric = make(map[string]string, len(p99Families))
	p.P99SamplesByMetric = make(map[string]int, len(p99Families))
	for _, i := range p99Families {
		fam := families[i]
		n := fam.Of(&m).Samples
		p.P99SamplesByMetric[fam.Name] = n
		p.P99InterpretationByMetric[fam.Name] = p99Interpretation(n)
	}
	if p.FailurePolicy == "" {
		p.FailurePolicy = failurePolicy
	}

	r.Metrics = m
	r.MetricPopulation = p
	r.PerformanceEligible = eligible
	if r.MeasurementProtocol == "" || r.MeasurementProtocol == protocolV3 || r.MeasurementProtocol == protocolV4Reasoning {
		r.MeasurementProtocol = protocolV3
		if r.sawReasoning() {
			r.MeasurementProtocol = protocolV4Reasoning
		}
	}
	return nil
}

func p99Interpretation(samples int) string {
	if samples >= P99MinimumSamples {
		return p99TailEstimate
	}
	return p99Descriptive
}

// sawReasoning reports whether any response, successful or not, carried a
// reasoning chunk.
func (r *Report) sawReasoning() bool {
	for _, row := range r.RequestTimings {
		if row.ReasoningChunks > 0 {
			return true
		}
	}
	for _, f := range r.Failures {
		if f.ResponseTiming != nil && f.ResponseTiming.ReasoningChunks > 0 ||
			f.ResponseMetadata != nil && f.ResponseMetadata.ReasoningChunks > 0 {
			return true
		}
	}
	return false
}

// Check validates one successful row: finite values, non-negative counts,
// and 0 <= TTFO <= TTFT <= E2E (TTFO only when the row records it); a row
// without token times (TokenTimed false: an embeddings answer) has none of
// them and E2E >= 0.
func (row *TimingRow) Check() error {
	floats := []struct {
		key string
		v   *float64
	}{
		{"time_to_first_output_ms", &row.TimeToFirstOutputMS}, {"ttft_ms", &row.TTFTMS},
		{"e2e_ms", &row.E2EMS}, {"generation_ms", &row.GenerationMS},
		{"visible_generation_ms", &row.VisibleGenerationMS},
		{"effective_prefill_tok_s", row.EffectivePrefillTokS}, {"decode_tok_s", row.DecodeTokS},
		{"tpot_ms", row.TPOTMS}, {"mean_time_per_output_token_ms", row.MeanTimePerOutputTokenMS},
		{"mean_inter_token_latency_ms", row.MeanInterTokenLatencyMS},
	}
	for _, f := range floats {
		if f.v != nil && (math.IsNaN(*f.v) || math.IsInf(*f.v, 0)) {
			return fmt.Errorf("%s is %v, want a finite number", f.key, *f.v)
		}
	}
	counts := []struct {
		key string
		v   int
	}{
		{"content_chunks", row.ContentChunks}, {"reasoning_chunks", row.ReasoningChunks},
	}
	for _, c := range counts {
		if c.v < 0 {
			return fmt.Errorf("%s is %d, want a count >= 0", c.key, c.v)
		}
	}
	if row.OutputTokens != nil && *row.OutputTokens < 0 {
		return fmt.Errorf("output_tokens is %d, want a count >= 0", *row.OutputTokens)
	}
	if row.PromptTokens != nil && *row.PromptTokens < 0 {
		return fmt.Errorf("prompt_tokens is %d, want a count >= 0", *row.PromptTokens)
	}
	if !row.TokenTimed() {
		// An answer that generates no token: its latency alone.
		for _, k := range tokenTimeKeys {
			if row.shape.has(k) {
				return fmt.Errorf("%s without ttft_ms: a row has every time to a token, or none (an embeddings answer)", k)
			}
		}
		if !(row.E2EMS >= 0) {
			return fmt.Errorf("want e2e_ms (%v) >= 0", row.E2EMS)
		}
		return nil
	}
	ttfo := row.TimeToFirstOutputMS
	if !row.shape.has("time_to_first_output_ms") {
		ttfo = 0
	}
	if !(0 <= ttfo && ttfo <= row.TTFTMS && row.TTFTMS <= row.E2EMS) {
		return fmt.Errorf("want 0 <= time_to_first_output_ms (%v) <= ttft_ms (%v) <= e2e_ms (%v)", ttfo, row.TTFTMS, row.E2EMS)
	}
	return nil
}

// derive sets every row-derived field of m; PrefixCacheHitAvg and the
// throughput fields are left to the caller.
func (m *Metrics) derive(rows []TimingRow) error {
	samples := make([][]float64, len(families))
	add := func(fam int, v *float64) {
		if v != nil {
			samples[fam] = append(samples[fam], *v)
		}
	}
	exact := true
	outputTokens, promptTokens := 0, 0
	var err error
	m.PromptTokenSamples, m.ContentChunks, m.ReasoningChunks = 0, 0, 0
	m.RequestCanarySamples, m.RequestCanaryPassed = 0, 0
	m.ControlledOutputSamples, m.ControlledOutputUnobservable, m.ControlledOutputExactAdherence = 0, 0, 0
	m.OutputTokenSources = make(map[OutputTokenSource]int)
	for i := range rows {
		row := &rows[i]
		if row.OutputTokens != nil {
			add(famCompletionTokens, new(float64(*row.OutputTokens)))
			if outputTokens, err = addCount(outputTokens, *row.OutputTokens, "output_tokens"); err != nil {
				return err
			}
		}
		if row.PromptTokens != nil {
			add(famPromptTokens, new(float64(*row.PromptTokens)))
			if promptTokens, err = addCount(promptTokens, *row.PromptTokens, "prompt_tokens"); err != nil {
				return err
			}
			m.PromptTokenSamples++
		}
		add(famDecodeTokS, row.DecodeTokS)
		add(famEffectivePrefill, row.EffectivePrefillTokS)
		add(famMeanInterTokenLatency, row.MeanInterTokenLatencyMS)
		add(famE2E, &row.E2EMS)
		add(famMeanTimePerOutputToken, row.MeanTimePerOutputTokenMS)
		if row.shape.has("time_to_first_output_ms") {
			add(famTimeToFirstOutput, &row.TimeToFirstOutputMS)
		}
		add(famTPOT, row.TPOTMS)
		if row.TokenTimed() {
			add(famGeneration, &row.GenerationMS)
			add(famTTFT, &row.TTFTMS)
		}

		exact = exact && row.OutputTokenSource == SourceUsage && row.OutputTokens != nil
		m.OutputTokenSources[row.OutputTokenSource]++
		m.ContentChunks += row.ContentChunks
		m.ReasoningChunks += row.ReasoningChunks
		if c := row.RequestCanary; c != nil {
			m.RequestCanarySamples++
			if c.Passed {
				m.RequestCanaryPassed++
			}
		}
		if c := row.ControlledOutput; c != nil {
			m.ControlledOutputSamples++
			switch {
			case c.ExactAdherence == nil:
				m.ControlledOutputUnobservable++
			case *c.ExactAdherence:
				m.ControlledOutputExactAdherence++
			}
		}
	}
	m.OutputTokens = nil
	if exact {
		m.OutputTokens = new(outputTokens)
	}
	m.PromptTokens = nil
	if m.PromptTokenSamples > 0 {
		m.PromptTokens = new(promptTokens)
	}
	m.ControlledOutputExactAdherenceRate = nil
	if observable := m.ControlledOutputSamples - m.ControlledOutputUnobservable; observable > 0 {
		m.ControlledOutputExactAdherenceRate = new(float64(m.ControlledOutputExactAdherence) / float64(observable))
	}
	for i, fam := range families {
		d, err := distributionOf(stats.Summarize(samples[i]))
		if err != nil {
			return fmt.Errorf("%s: %w", fam.Name, err)
		}
		*fam.Of(m) = d
	}
	return nil
}

// Indexes into families.
const (
	famCompletionTokens = iota
	famPromptTokens
	famDecodeTokS
	famEffectivePrefill
	famMeanInterTokenLatency
	famE2E
	famGeneration
	famMeanTimePerOutputToken
	famTimeToFirstOutput
	famTPOT
	famTTFT
)

var errOverflow = errors.New("a statistic overflows float64")

// distributionOf converts a stats.Summary to a Distribution: NaN (an
// undefined statistic) becomes nil. It fails on ±Inf, which the artifact
// cannot hold.
func distributionOf(s stats.Summary) (Distribution, error) {
	var err error
	val := func(v float64) *float64 {
		switch {
		case math.IsNaN(v):
			return nil
		case math.IsInf(v, 0):
			err = errOverflow
			return nil
		}
		return new(v)
	}
	d := Distribution{
		Samples: s.N, Mean: val(s.Mean), Stddev: val(s.Stddev),
		MeanCI95Low: val(s.CI95Low), MeanCI95High: val(s.CI95High),
		Min: val(s.Min), P25: val(s.P25), P50: val(s.P50), P75: val(s.P75),
		P90: val(s.P90), P95: val(s.P95), P99: val(s.P99), Max: val(s.Max),
	}
	return d, err
}

// rowSources maps a row key to the metrics derived from it. Rows of older
// generations lack some keys (11-key capacity-v3 rows have no chunk counts
// or TTFO); the metrics derived from a key some row lacks keep their
// recorded values.
var rowSources = []struct {
	rowKey string
	keep   func(dst, src *Metrics)
}{
	{"time_to_first_output_ms", func(d, s *Metrics) { d.TimeToFirstOutput = s.TimeToFirstOutput }},
	{"tpot_ms", func(d, s *Metrics) { d.TPOT = s.TPOT }},
	{"mean_time_per_output_token_ms", func(d, s *Metrics) { d.MeanTimePerOutputToken = s.MeanTimePerOutputToken }},
	// content_chunks_s is then recomputed from the kept content_chunks.
	{"content_chunks", func(d, s *Metrics) { d.ContentChunks = s.ContentChunks }},
	{"reasoning_chunks", func(d, s *Metrics) { d.ReasoningChunks = s.ReasoningChunks }},
	{"request_canary", func(d, s *Metrics) {
		d.RequestCanarySamples, d.RequestCanaryPassed = s.RequestCanarySamples, s.RequestCanaryPassed
	}},
	{"controlled_output", func(d, s *Metrics) {
		d.ControlledOutputSamples, d.ControlledOutputUnobservable = s.ControlledOutputSamples, s.ControlledOutputUnobservable
		d.ControlledOutputExactAdherence = s.ControlledOutputExactAdherence
		d.ControlledOutputExactAdherenceRate = s.ControlledOutputExactAdherenceRate
	}},
}

// keepUnderivable copies into m, from the recorded metrics, what rowSources
// says cannot be derived because some row lacks its key.
func keepUnderivable(m, recorded *Metrics, rows []TimingRow) {
	for _, src := range rowSources {
		for i := range rows {
			if !rows[i].shape.has(src.rowKey) {
				src.keep(m, recorded)
				break
			}
		}
	}
}

// addCount adds n to the run total sum of key, failing instead of
// overflowing (a read artifact can hold any count).
func addCount(sum, n int, key string) (int, error) {
	if n > math.MaxInt-sum {
		return sum, fmt.Errorf("the sum of the rows' %s overflows (%d + %d)", key, sum, n)
	}
	return sum + n, nil
}

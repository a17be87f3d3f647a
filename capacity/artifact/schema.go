package artifact

// The key tables of every artifact object (capacity/PROTOCOL.md#artifact-keys). One table
// per type drives both writing and reading.

var (
	optStringCodec = nullableCodec(stringCodec)
	optIntCodec    = nullableCodec(intCodec)
	optFloatCodec  = nullableCodec(floatCodec)
	optBoolCodec   = nullableCodec(boolCodec)
)

var canaryTable = newArtTable(func(c *CanaryCheck) *shape { return &c.shape },
	fieldOf("capture_complete", func(c *CanaryCheck) *bool { return &c.CaptureComplete }, boolCodec),
	fieldOf("foreign_marker_count", func(c *CanaryCheck) *int { return &c.ForeignMarkerCount }, intCodec),
	fieldOf("marker", func(c *CanaryCheck) *string { return &c.Marker }, stringCodec),
	fieldOf("marker_at_start", func(c *CanaryCheck) *bool { return &c.MarkerAtStart }, boolCodec),
	fieldOf("observed_marker_count", func(c *CanaryCheck) *int { return &c.ObservedMarkerCount }, intCodec),
	fieldOf("passed", func(c *CanaryCheck) *bool { return &c.Passed }, boolCodec),
)

var controlledTable = newArtTable(func(c *ControlledOutputCheck) *shape { return &c.shape },
	fieldOf("capture_complete", func(c *ControlledOutputCheck) *bool { return &c.CaptureComplete }, boolCodec),
	fieldOf("exact_adherence", func(c *ControlledOutputCheck) **bool { return &c.ExactAdherence }, optBoolCodec),
	fieldOf("observed_code_words", func(c *ControlledOutputCheck) *int { return &c.ObservedCodeWords }, intCodec),
	fieldOf("observed_extra_words", func(c *ControlledOutputCheck) *int { return &c.ObservedExtraWords }, intCodec),
	fieldOf("passed", func(c *ControlledOutputCheck) *bool { return &c.Passed }, boolCodec),
	fieldOf("policy", func(c *ControlledOutputCheck) *string { return &c.Policy }, stringCodec),
	fieldOf("requested_words", func(c *ControlledOutputCheck) *int { return &c.RequestedWords }, intCodec),
)

var (
	optCanary     = nullableCodec(canaryTable.codec())
	optControlled = nullableCodec(controlledTable.codec())
	sourceCodec   = stringTypeCodec[OutputTokenSource]()
)

var rowTable = newArtTable(func(r *TimingRow) *shape { return &r.shape },
	fieldOf("content_chunks", func(r *TimingRow) *int { return &r.ContentChunks }, intCodec),
	fieldOf("controlled_output", func(r *TimingRow) **ControlledOutputCheck { return &r.ControlledOutput }, optControlled),
	fieldOf("decode_tok_s", func(r *TimingRow) **float64 { return &r.DecodeTokS }, optFloatCodec),
	fieldOf("e2e_ms", func(r *TimingRow) *float64 { return &r.E2EMS }, floatCodec),
	fieldOf("effective_prefill_tok_s", func(r *TimingRow) **float64 { return &r.EffectivePrefillTokS }, optFloatCodec),
	fieldOf("generation_ms", func(r *TimingRow) *float64 { return &r.GenerationMS }, floatCodec),
	fieldOf("mean_inter_token_latency_ms", func(r *TimingRow) **float64 { return &r.MeanInterTokenLatencyMS }, optFloatCodec),
	fieldOf("mean_time_per_output_token_ms", func(r *TimingRow) **float64 { return &r.MeanTimePerOutputTokenMS }, optFloatCodec),
	fieldOf("output_token_source", func(r *TimingRow) *OutputTokenSource { return &r.OutputTokenSource }, sourceCodec),
	fieldOf("output_tokens", func(r *TimingRow) *int { return &r.OutputTokens }, intCodec),
	fieldOf("planned_context_tokens", func(r *TimingRow) *int { return &r.PlannedContextTokens }, intCodec),
	fieldOf("prompt_tokens", func(r *TimingRow) **int { return &r.PromptTokens }, optIntCodec),
	fieldOf("reasoning_chunks", func(r *TimingRow) *int { return &r.ReasoningChunks }, intCodec),
	fieldOf("request_canary", func(r *TimingRow) **CanaryCheck { return &r.RequestCanary }, optCanary),
	fieldOf("request_index", func(r *TimingRow) *int { return &r.RequestIndex }, intCodec),
	fieldOf("time_to_first_output_ms", func(r *TimingRow) *float64 { return &r.TimeToFirstOutputMS }, floatCodec),
	fieldOf("tpot_ms", func(r *TimingRow) **float64 { return &r.TPOTMS }, optFloatCodec),
	fieldOf("ttft_ms", func(r *TimingRow) *float64 { return &r.TTFTMS }, floatCodec),
	fieldOf("visible_content_truncated", func(r *TimingRow) *bool { return &r.VisibleContentTruncated }, boolCodec),
	fieldOf("visible_generation_ms", func(r *TimingRow) *float64 { return &r.VisibleGenerationMS }, floatCodec),
)

var usageTable = newArtTable(func(u *Usage) *shape { return &u.shape },
	fieldOf("completion_tokens", func(u *Usage) **int { return &u.CompletionTokens }, optIntCodec),
	fieldOf("prompt_tokens", func(u *Usage) **int { return &u.PromptTokens }, optIntCodec),
	fieldOf("total_tokens", func(u *Usage) **int { return &u.TotalTokens }, optIntCodec),
)

var metadataTable = newArtTable(func(m *ResponseMetadata) *shape { return &m.shape },
	fieldOf("content_chunks", func(m *ResponseMetadata) *int { return &m.ContentChunks }, intCodec),
	fieldOf("finish_reasons", func(m *ResponseMetadata) *[]string { return &m.FinishReasons }, sliceCodec(stringCodec)),
	fieldOf("output_token_source", func(m *ResponseMetadata) *OutputTokenSource { return &m.OutputTokenSource }, sourceCodec),
	fieldOf("reasoning_chunks", func(m *ResponseMetadata) *int { return &m.ReasoningChunks }, intCodec),
	fieldOf("stream_terminal_observed", func(m *ResponseMetadata) *bool { return &m.StreamTerminalObserved }, boolCodec),
	fieldOf("usage", func(m *ResponseMetadata) **Usage { return &m.Usage }, nullableCodec(usageTable.codec())),
	fieldOf("visible_content_truncated", func(m *ResponseMetadata) *bool { return &m.VisibleContentTruncated }, boolCodec),
)

var failureTable = newArtTable(func(f *Failure) *shape { return &f.shape },
	optionalOf("controlled_output", func(f *Failure) **ControlledOutputCheck { return &f.ControlledOutput }, controlledTable.codec()),
	fieldOf("elapsed_ms", func(f *Failure) *float64 { return &f.ElapsedMS }, floatCodec),
	fieldOf("error_message", func(f *Failure) *string { return &f.ErrorMessage }, stringCodec),
	fieldOf("error_message_truncated", func(f *Failure) *bool { return &f.ErrorMessageTruncated }, boolCodec),
	fieldOf("error_type", func(f *Failure) *string { return &f.ErrorType }, stringCodec),
	fieldOf("failure_class", func(f *Failure) *FailureClass { return &f.FailureClass }, stringTypeCodec[FailureClass]()),
	fieldOf("http_status", func(f *Failure) **int { return &f.HTTPStatus }, optIntCodec),
	fieldOf("performance_eligible", func(f *Failure) *bool { return &f.PerformanceEligible }, boolCodec),
	fieldOf("planned_context_tokens", func(f *Failure) *int { return &f.PlannedContextTokens }, intCodec),
	optionalOf("request_canary", func(f *Failure) **CanaryCheck { return &f.RequestCanary }, canaryTable.codec()),
	fieldOf("request_index", func(f *Failure) *int { return &f.RequestIndex }, intCodec),
	fieldOf("response_metadata", func(f *Failure) **ResponseMetadata { return &f.ResponseMetadata }, nullableCodec(metadataTable.codec())),
	fieldOf("response_received", func(f *Failure) *bool { return &f.ResponseReceived }, boolCodec),
	fieldOf("response_timing", func(f *Failure) **TimingRow { return &f.ResponseTiming }, nullableCodec(rowTable.codec())),
)

var serveFlagsTable = newArtTable(func(s *ServeFlags) *shape { return &s.shape },
	fieldOf("no_thinking", func(s *ServeFlags) *bool { return &s.NoThinking }, boolCodec),
	fieldOf("reasoning_effort", func(s *ServeFlags) **string { return &s.ReasoningEffort }, optStringCodec),
	fieldOf("shared_prefix_burst", func(s *ServeFlags) *bool { return &s.SharedPrefixBurst }, boolCodec),
	fieldOf("thinking_mode", func(s *ServeFlags) *string { return &s.ThinkingMode }, stringCodec),
)

var samplingFieldTable = newArtTable(func(s *SamplingField) *shape { return &s.shape },
	fieldOf("effective_request", func(s *SamplingField) **float64 { return &s.EffectiveRequest }, optFloatCodec),
	fieldOf("requested", func(s *SamplingField) **float64 { return &s.Requested }, optFloatCodec),
	fieldOf("sent", func(s *SamplingField) *bool { return &s.Sent }, boolCodec),
)

var samplingTable = newArtTable(func(s *Sampling) *shape { return &s.shape },
	fieldOf("temperature", func(s *Sampling) *SamplingField { return &s.Temperature }, samplingFieldTable.codec()),
	fieldOf("top_p", func(s *Sampling) *SamplingField { return &s.TopP }, samplingFieldTable.codec()),
)

var populationTable = newArtTable(func(p *MetricPopulation) *shape { return &p.shape },
	fieldOf("aggregate_throughput_eligible", func(p *MetricPopulation) *bool { return &p.AggregateThroughputEligible }, boolCodec),
	fieldOf("attempted_requests", func(p *MetricPopulation) *int { return &p.AttemptedRequests }, intCodec),
	fieldOf("excluded_requests", func(p *MetricPopulation) *int { return &p.ExcludedRequests }, intCodec),
	fieldOf("failure_policy", func(p *MetricPopulation) *string { return &p.FailurePolicy }, stringCodec),
	fieldOf("p99_interpretation", func(p *MetricPopulation) *string { return &p.P99Interpretation }, stringCodec),
	fieldOf("p99_interpretation_by_metric", func(p *MetricPopulation) *map[string]string { return &p.P99InterpretationByMetric }, mapCodec(stringMapKey[string](), stringCodec)),
	fieldOf("p99_minimum_recommended_samples", func(p *MetricPopulation) *int { return &p.P99MinimumRecommendedSamples }, intCodec),
	fieldOf("p99_samples_by_metric", func(p *MetricPopulation) *map[string]int { return &p.P99SamplesByMetric }, mapCodec(stringMapKey[string](), intCodec)),
	fieldOf("performance_eligible_requests", func(p *MetricPopulation) *int { return &p.PerformanceEligibleRequests }, intCodec),
	fieldOf("successful_requests", func(p *MetricPopulation) *int { return &p.SuccessfulRequests }, intCodec),
)

// metricsTable is generated: every family times every statistic by the one
// naming rule of Family.Key, plus the scalars.
var metricsTable = newArtTable(func(m *Metrics) *shape { return &m.shape }, metricsFields()...)

func metricsFields() []artField[Metrics] {
	fs := []artField[Metrics]{
		fieldOf("content_chunks", func(m *Metrics) *int { return &m.ContentChunks }, intCodec),
		fieldOf("content_chunks_s", func(m *Metrics) **float64 { return &m.ContentChunksPerSecond }, optFloatCodec),
		fieldOf("controlled_output_exact_adherence", func(m *Metrics) *int { return &m.ControlledOutputExactAdherence }, intCodec),
		fieldOf("controlled_output_exact_adherence_rate", func(m *Metrics) **float64 { return &m.ControlledOutputExactAdherenceRate }, optFloatCodec),
		fieldOf("controlled_output_samples", func(m *Metrics) *int { return &m.ControlledOutputSamples }, intCodec),
		fieldOf("controlled_output_unobservable", func(m *Metrics) *int { return &m.ControlledOutputUnobservable }, intCodec),
		fieldOf("output_token_sources", func(m *Metrics) *map[OutputTokenSource]int { return &m.OutputTokenSources }, mapCodec(stringMapKey[OutputTokenSource](), intCodec)),
		fieldOf("output_tokens", func(m *Metrics) **int { return &m.OutputTokens }, optIntCodec),
		fieldOf("prefix_cache_hit_avg", func(m *Metrics) **float64 { return &m.PrefixCacheHitAvg }, optFloatCodec),
		fieldOf("prompt_token_samples", func(m *Metrics) *int { return &m.PromptTokenSamples }, intCodec),
		fieldOf("prompt_tokens", func(m *Metrics) **int { return &m.PromptTokens }, optIntCodec),
		fieldOf("reasoning_chunks", func(m *Metrics) *int { return &m.ReasoningChunks }, intCodec),
		fieldOf("request_canary_passed", func(m *Metrics) *int { return &m.RequestCanaryPassed }, intCodec),
		fieldOf("request_canary_samples", func(m *Metrics) *int { return &m.RequestCanarySamples }, intCodec),
		fieldOf("throughput_performance_eligible", func(m *Metrics) *bool { return &m.ThroughputPerformanceEligible }, boolCodec),
		fieldOf("throughput_tok_s", func(m *Metrics) **float64 { return &m.ThroughputTokS }, optFloatCodec),
	}
	for _, fam := range families {
		for _, s := range statistics {
			if s == StatSamples {
				fs = append(fs, fieldOf(fam.Key(s), func(m *Metrics) *int { return &fam.Of(m).Samples }, intCodec))
				continue
			}
			fs = append(fs, fieldOf(fam.Key(s), func(m *Metrics) **float64 { return fam.Of(m).field(s) }, optFloatCodec))
		}
	}
	return fs
}

var reportTable = newArtTable(func(r *Report) *shape { return &r.shape },
	fieldOf("base_url", func(r *Report) *string { return &r.BaseURL }, stringCodec),
	fieldOf("clock_domain_id", func(r *Report) **string { return &r.ClockDomainID }, optStringCodec),
	fieldOf("completed", func(r *Report) *int { return &r.Completed }, intCodec),
	fieldOf("concurrency", func(r *Report) *int { return &r.Concurrency }, intCodec),
	fieldOf("configuration_fingerprint", func(r *Report) **string { return &r.ConfigurationFingerprint }, optStringCodec),
	fieldOf("context_distribution", func(r *Report) *map[int]int { return &r.ContextDistribution }, mapCodec(intMapKey, intCodec)),
	fieldOf("context_seed", func(r *Report) *int64 { return &r.ContextSeed }, int64Codec),
	fieldOf("context_tokens", func(r *Report) **int { return &r.ContextTokens }, optIntCodec),
	fieldOf("controlled_output_policy", func(r *Report) *string { return &r.ControlledOutputPolicy }, stringCodec),
	fieldOf("engine", func(r *Report) **string { return &r.Engine }, optStringCodec),
	fieldOf("failed", func(r *Report) *int { return &r.Failed }, intCodec),
	fieldOf("failures", func(r *Report) *[]Failure { return &r.Failures }, sliceCodec(failureTable.codec())),
	fieldOf("finished_at", func(r *Report) *string { return &r.FinishedAt }, stringCodec),
	fieldOf("finished_at_unix_ns", func(r *Report) *int64 { return &r.FinishedAtUnixNS }, int64Codec),
	fieldOf("gpu", func(r *Report) **string { return &r.GPU }, optStringCodec),
	fieldOf("manifest", func(r *Report) **string { return &r.Manifest }, optStringCodec),
	fieldOf("max_context_tokens", func(r *Report) **int { return &r.MaxContextTokens }, optIntCodec),
	fieldOf("max_tokens", func(r *Report) *int { return &r.MaxTokens }, intCodec),
	fieldOf("measurement_protocol", func(r *Report) *string { return &r.MeasurementProtocol }, stringCodec),
	fieldOf("metric_population", func(r *Report) *MetricPopulation { return &r.MetricPopulation }, populationTable.codec()),
	fieldOf("metrics", func(r *Report) *Metrics { return &r.Metrics }, metricsTable.codec()),
	fieldOf("model", func(r *Report) *string { return &r.Model }, stringCodec),
	fieldOf("performance_eligible", func(r *Report) *bool { return &r.PerformanceEligible }, boolCodec),
	fieldOf("prompt_cache_mode", func(r *Report) *string { return &r.PromptCacheMode }, stringCodec),
	fieldOf("request_canaries", func(r *Report) *bool { return &r.RequestCanaries }, boolCodec),
	fieldOf("request_timings", func(r *Report) *[]TimingRow { return &r.RequestTimings }, sliceCodec(rowTable.codec())),
	fieldOf("requests", func(r *Report) *int { return &r.Requests }, intCodec),
	fieldOf("response_words", func(r *Report) *int { return &r.ResponseWords }, intCodec),
	fieldOf("responses_received", func(r *Report) *int { return &r.ResponsesReceived }, intCodec),
	fieldOf("run_id", func(r *Report) *string { return &r.RunID }, stringCodec),
	fieldOf("sampling", func(r *Report) *Sampling { return &r.Sampling }, samplingTable.codec()),
	fieldOf("schema", func(r *Report) *string { return &r.Schema }, stringCodec),
	fieldOf("serve_flags", func(r *Report) *ServeFlags { return &r.ServeFlags }, serveFlagsTable.codec()),
	fieldOf("shared_prefix_tokens", func(r *Report) *int { return &r.SharedPrefixTokens }, intCodec),
	fieldOf("source_recipe", func(r *Report) **string { return &r.SourceRecipe }, optStringCodec),
	fieldOf("started_at", func(r *Report) *string { return &r.StartedAt }, stringCodec),
	fieldOf("started_at_unix_ns", func(r *Report) *int64 { return &r.StartedAtUnixNS }, int64Codec),
	fieldOf("tier", func(r *Report) **string { return &r.Tier }, optStringCodec),
	fieldOf("timestamp_precision", func(r *Report) *string { return &r.TimestampPrecision }, stringCodec),
	fieldOf("timing_methodology", func(r *Report) *map[string]string { return &r.TimingMethodology }, mapCodec(stringMapKey[string](), stringCodec)),
	fieldOf("wall_clock_ms", func(r *Report) *float64 { return &r.WallClockMS }, floatCodec),
)

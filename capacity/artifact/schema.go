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
	fieldOf("output_tokens", func(r *TimingRow) **int { return &r.OutputTokens }, optIntCodec),
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
// naming rule of family.Key, plus the scalars.
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
			if s == statSamples {
				fs = append(fs, fieldOf(fam.Key(s), func(m *Metrics) *int { return &fam.Of(m).Samples }, intCodec))
				continue
			}
			fs = append(fs, fieldOf(fam.Key(s), func(m *Metrics) **float64 { return fam.Of(m).field(s) }, optFloatCodec))
		}
	}
	return fs
}

var reportTable = newArtTable(func(r *Report) *shape { return &r.shape },
	optionalOf("anvil_go", func(r *Report) **Extension { return &r.AnvilGo }, extensionTable.codec()),
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

// The anvil_go extension (extension.go). Optional members are written only
// when set.

var runSummaryTable = newArtTable(func(r *RunSummary) *shape { return &r.shape },
	optionalOf("absent_timings", func(r *RunSummary) **string { return &r.AbsentTimings }, stringCodec),
	optionalOf("api", func(r *RunSummary) **string { return &r.API }, stringCodec),
	optionalOf("benchmark", func(r *RunSummary) **string { return &r.Benchmark }, stringCodec),
	optionalOf("duration_ms", func(r *RunSummary) **float64 { return &r.DurationMS }, floatCodec),
	optionalMap("extra_body", func(r *RunSummary) *map[string]string { return &r.ExtraBody }),
	optionalOf("go_version", func(r *RunSummary) **string { return &r.GoVersion }, stringCodec),
	fieldOf("interrupted", func(r *RunSummary) *bool { return &r.Interrupted }, boolCodec),
	optionalOf("module_version", func(r *RunSummary) **string { return &r.ModuleVersion }, stringCodec),
	fieldOf("never_sent_requests", func(r *RunSummary) *int { return &r.NeverSentRequests }, intCodec),
	fieldOf("sent_requests", func(r *RunSummary) *int { return &r.SentRequests }, intCodec),
	optionalOf("stop_reason", func(r *RunSummary) **string { return &r.StopReason }, stringCodec),
	optionalOf("vcs_modified", func(r *RunSummary) **bool { return &r.VCSModified }, boolCodec),
	optionalOf("vcs_revision", func(r *RunSummary) **string { return &r.VCSRevision }, stringCodec),
	optionalOf("warmup", func(r *RunSummary) **string { return &r.Warmup }, stringCodec),
	optionalOf("warmup_ms", func(r *RunSummary) **float64 { return &r.WarmupMS }, floatCodec),
	optionalOf("warmup_requests", func(r *RunSummary) **int { return &r.WarmupRequests }, intCodec),
	optionalOf("warmup_steady", func(r *RunSummary) **bool { return &r.WarmupSteady }, boolCodec),
)

var arrivalTable = newArtTable(func(a *Arrival) *shape { return &a.shape },
	fieldOf("achieved_rps", func(a *Arrival) **float64 { return &a.AchievedRPS }, optFloatCodec),
	fieldOf("burstiness", func(a *Arrival) **float64 { return &a.Burstiness }, optFloatCodec),
	fieldOf("max_in_flight", func(a *Arrival) *int { return &a.MaxInFlight }, intCodec),
	fieldOf("offered_rps", func(a *Arrival) **float64 { return &a.OfferedRPS }, optFloatCodec),
	fieldOf("process", func(a *Arrival) *string { return &a.Process }, stringCodec),
	fieldOf("rate_rps", func(a *Arrival) *float64 { return &a.RateRPS }, floatCodec),
	fieldOf("seed", func(a *Arrival) *int64 { return &a.Seed }, int64Codec),
)

var sloTable = newArtTable(func(s *SLOResult) *shape { return &s.shape },
	fieldOf("attained", func(s *SLOResult) *float64 { return &s.Attained }, floatCodec),
	fieldOf("attainment", func(s *SLOResult) *float64 { return &s.Attainment }, floatCodec),
	fieldOf("e2e_ms", func(s *SLOResult) **float64 { return &s.E2EMS }, optFloatCodec),
	fieldOf("goodput_rps", func(s *SLOResult) *float64 { return &s.GoodputRPS }, floatCodec),
	fieldOf("latency_clock", func(s *SLOResult) *string { return &s.LatencyClock }, stringCodec),
	fieldOf("met_requests", func(s *SLOResult) *int { return &s.MetRequests }, intCodec),
	fieldOf("passed", func(s *SLOResult) *bool { return &s.Passed }, boolCodec),
	fieldOf("tpot_ms", func(s *SLOResult) **float64 { return &s.TPOTMS }, optFloatCodec),
	fieldOf("ttft_ms", func(s *SLOResult) **float64 { return &s.TTFTMS }, optFloatCodec),
)

var searchTable = newArtTable(func(s *SearchProbe) *shape { return &s.shape },
	fieldOf("kind", func(s *SearchProbe) *string { return &s.Kind }, stringCodec),
	fieldOf("probe", func(s *SearchProbe) *int { return &s.Probe }, intCodec),
	optionalOf("repeat", func(s *SearchProbe) **int { return &s.Repeat }, intCodec),
	fieldOf("value", func(s *SearchProbe) *float64 { return &s.Value }, floatCodec),
)

// runQuantilesTable has p999; requestQuantilesTable, the per-request
// distribution, does not.
var runQuantilesTable = newArtTable(func(q *Quantiles) *shape { return &q.shape },
	fieldOf("max", func(q *Quantiles) *float64 { return &q.Max }, floatCodec),
	fieldOf("p50", func(q *Quantiles) *float64 { return &q.P50 }, floatCodec),
	fieldOf("p90", func(q *Quantiles) *float64 { return &q.P90 }, floatCodec),
	fieldOf("p99", func(q *Quantiles) *float64 { return &q.P99 }, floatCodec),
	fieldOf("p999", func(q *Quantiles) *float64 { return &q.P999 }, floatCodec),
)

var requestQuantilesTable = newArtTable(func(q *Quantiles) *shape { return &q.shape },
	fieldOf("max", func(q *Quantiles) *float64 { return &q.Max }, floatCodec),
	fieldOf("p50", func(q *Quantiles) *float64 { return &q.P50 }, floatCodec),
	fieldOf("p90", func(q *Quantiles) *float64 { return &q.P90 }, floatCodec),
	fieldOf("p99", func(q *Quantiles) *float64 { return &q.P99 }, floatCodec),
)

var stallRuleTable = newArtTable(func(s *StallRule) *shape { return &s.shape },
	fieldOf("floor_ms", func(s *StallRule) *float64 { return &s.FloorMS }, floatCodec),
	fieldOf("override_ms", func(s *StallRule) **float64 { return &s.OverrideMS }, optFloatCodec),
	fieldOf("relative", func(s *StallRule) *float64 { return &s.Relative }, floatCodec),
)

var chunkTimingTable = newArtTable(func(c *ChunkTiming) *shape { return &c.shape },
	fieldOf("exact", func(c *ChunkTiming) *bool { return &c.Exact }, boolCodec),
	fieldOf("gaps", func(c *ChunkTiming) *int { return &c.Gaps }, intCodec),
	fieldOf("itl_ms", func(c *ChunkTiming) *Quantiles { return &c.ITLMS }, runQuantilesTable.codec()),
	fieldOf("per_token", func(c *ChunkTiming) *bool { return &c.PerToken }, boolCodec),
	fieldOf("relative_error", func(c *ChunkTiming) *float64 { return &c.RelativeError }, floatCodec),
	fieldOf("stall_rule", func(c *ChunkTiming) *StallRule { return &c.StallRule }, stallRuleTable.codec()),
	fieldOf("stalls", func(c *ChunkTiming) *int { return &c.Stalls }, intCodec),
	fieldOf("tokens_per_chunk_mean", func(c *ChunkTiming) **float64 { return &c.TokensPerChunkMean }, optFloatCodec),
	optionalOf("distribution", func(c *ChunkTiming) **GapDistribution { return &c.Distribution }, gapDistributionTable.codec()),
)

var promptSizingTable = newArtTable(func(p *PromptSizing) *shape { return &p.shape },
	fieldOf("calibration_requests", func(p *PromptSizing) *int { return &p.CalibrationRequests }, intCodec),
	fieldOf("chars_per_token", func(p *PromptSizing) *float64 { return &p.CharsPerToken }, floatCodec),
	fieldOf("counted_over_planned", func(p *PromptSizing) **float64 { return &p.CountedOverPlanned }, optFloatCodec),
	fieldOf("counted_requests", func(p *PromptSizing) *int { return &p.CountedRequests }, intCodec),
	fieldOf("max_relative_error", func(p *PromptSizing) **float64 { return &p.MaxRelativeError }, optFloatCodec),
	fieldOf("method", func(p *PromptSizing) *string { return &p.Method }, stringCodec),
	fieldOf("source", func(p *PromptSizing) **string { return &p.Source }, optStringCodec),
	fieldOf("off_plan_requests", func(p *PromptSizing) *int { return &p.OffPlanRequests }, intCodec),
	fieldOf("template_tokens", func(p *PromptSizing) **int { return &p.TemplateTokens }, optIntCodec),
	fieldOf("tokenize_path", func(p *PromptSizing) **string { return &p.TokenizePath }, optStringCodec),
	fieldOf("tolerance", func(p *PromptSizing) *float64 { return &p.Tolerance }, floatCodec),
	fieldOf("tolerance_tokens", func(p *PromptSizing) *int { return &p.ToleranceTokens }, intCodec),
	fieldOf("unsizable_requests", func(p *PromptSizing) *int { return &p.UnsizableRequests }, intCodec),
	fieldOf("warning", func(p *PromptSizing) **string { return &p.Warning }, optStringCodec),
)

var contextWindowTable = newArtTable(func(c *ContextWindow) *shape { return &c.shape },
	fieldOf("advertised", func(c *ContextWindow) **int { return &c.Advertised }, optIntCodec),
	fieldOf("advertised_source", func(c *ContextWindow) **string { return &c.AdvertisedSource }, optStringCodec),
	fieldOf("note", func(c *ContextWindow) **string { return &c.Note }, optStringCodec),
	optionalOf("slots", func(c *ContextWindow) **int { return &c.Slots }, intCodec),
	optionalOf("slots_source", func(c *ContextWindow) **string { return &c.SlotsSource }, stringCodec),
	fieldOf("source", func(c *ContextWindow) *string { return &c.Source }, stringCodec),
	fieldOf("tokens", func(c *ContextWindow) *int { return &c.Tokens }, intCodec),
	fieldOf("truncation_window", func(c *ContextWindow) *int { return &c.TruncationWindow }, intCodec),
)

var connectionsTable = newArtTable(func(c *Connections) *shape { return &c.shape },
	fieldOf("dialed_in_measurement", func(c *Connections) *int { return &c.DialedInMeasurement }, intCodec),
	fieldOf("kept_alive_closed", func(c *Connections) *int { return &c.KeptAliveClosed }, intCodec),
	fieldOf("prewarmed", func(c *Connections) *int { return &c.Prewarmed }, intCodec),
	fieldOf("retried", func(c *Connections) *int { return &c.Retried }, intCodec),
	fieldOf("reuse_disabled", func(c *Connections) *bool { return &c.ReuseDisabled }, boolCodec),
)

var failedAttemptTable = newArtTable(func(a *FailedAttempt) *shape { return &a.shape },
	fieldOf("connect_ms", func(a *FailedAttempt) **float64 { return &a.ConnectMS }, optFloatCodec),
	fieldOf("ended_ms", func(a *FailedAttempt) *float64 { return &a.EndedMS }, floatCodec),
	fieldOf("got_conn_ms", func(a *FailedAttempt) *float64 { return &a.GotConnMS }, floatCodec),
	fieldOf("reused", func(a *FailedAttempt) *bool { return &a.Reused }, boolCodec),
	fieldOf("wrote_request_ms", func(a *FailedAttempt) **float64 { return &a.WroteRequestMS }, optFloatCodec),
)

var serverTimingsTable = newArtTable(func(t *ServerTimings) *shape { return &t.shape },
	fieldOf("cache_n", func(t *ServerTimings) **int { return &t.CacheN }, optIntCodec),
	fieldOf("predicted_ms", func(t *ServerTimings) **float64 { return &t.PredictedMS }, optFloatCodec),
	fieldOf("predicted_n", func(t *ServerTimings) **int { return &t.PredictedN }, optIntCodec),
	fieldOf("prompt_ms", func(t *ServerTimings) **float64 { return &t.PromptMS }, optFloatCodec),
	fieldOf("prompt_n", func(t *ServerTimings) **int { return &t.PromptN }, optIntCodec),
)

var phasesTable = newArtTable(func(p *Phases) *shape { return &p.shape },
	fieldOf("connect_ms", func(p *Phases) **float64 { return &p.ConnectMS }, optFloatCodec),
	optionalOf("failed_attempt", func(p *Phases) **FailedAttempt { return &p.FailedAttempt }, failedAttemptTable.codec()),
	fieldOf("first_byte_ms", func(p *Phases) **float64 { return &p.FirstByteMS }, optFloatCodec),
	fieldOf("first_event_ms", func(p *Phases) **float64 { return &p.FirstEventMS }, optFloatCodec),
	fieldOf("got_conn_ms", func(p *Phases) *float64 { return &p.GotConnMS }, floatCodec),
	fieldOf("retried", func(p *Phases) *bool { return &p.Retried }, boolCodec),
	fieldOf("reused", func(p *Phases) *bool { return &p.Reused }, boolCodec),
	fieldOf("wrote_request_ms", func(p *Phases) **float64 { return &p.WroteRequestMS }, optFloatCodec),
)

var requestDetailTable = newArtTable(func(d *RequestDetail) *shape { return &d.shape },
	fieldOf("counted_prompt_tokens", func(d *RequestDetail) **int { return &d.CountedPromptTokens }, optIntCodec),
	optionalOf("least_prompt_tokens", func(d *RequestDetail) **int { return &d.LeastPromptTokens }, intCodec),
	fieldOf("end_ms", func(d *RequestDetail) **float64 { return &d.EndMS }, optFloatCodec),
	fieldOf("first_content_ms", func(d *RequestDetail) **float64 { return &d.FirstContentMS }, optFloatCodec),
	fieldOf("first_output_ms", func(d *RequestDetail) **float64 { return &d.FirstOutputMS }, optFloatCodec),
	fieldOf("itl_ms", func(d *RequestDetail) **Quantiles { return &d.ITLMS }, nullableCodec(requestQuantilesTable.codec())),
	fieldOf("outcome", func(d *RequestDetail) *string { return &d.Outcome }, stringCodec),
	fieldOf("output_chunks", func(d *RequestDetail) *int { return &d.OutputChunks }, intCodec),
	fieldOf("phases", func(d *RequestDetail) **Phases { return &d.Phases }, nullableCodec(phasesTable.codec())),
	fieldOf("planned_prompt_tokens", func(d *RequestDetail) *int { return &d.PlannedPromptTokens }, intCodec),
	fieldOf("queue_ms", func(d *RequestDetail) **float64 { return &d.QueueMS }, optFloatCodec),
	fieldOf("request_index", func(d *RequestDetail) *int { return &d.RequestIndex }, intCodec),
	fieldOf("scheduled_e2e_ms", func(d *RequestDetail) **float64 { return &d.ScheduledE2EMS }, optFloatCodec),
	fieldOf("scheduled_ms", func(d *RequestDetail) **float64 { return &d.ScheduledMS }, optFloatCodec),
	fieldOf("scheduled_ttft_ms", func(d *RequestDetail) **float64 { return &d.ScheduledTTFTMS }, optFloatCodec),
	fieldOf("sent_ms", func(d *RequestDetail) **float64 { return &d.SentMS }, optFloatCodec),
	optionalOf("server_timings", func(d *RequestDetail) **ServerTimings { return &d.ServerTimings }, serverTimingsTable.codec()),
	fieldOf("stalls", func(d *RequestDetail) *int { return &d.Stalls }, intCodec),
	fieldOf("tokens_per_chunk", func(d *RequestDetail) **float64 { return &d.TokensPerChunk }, optFloatCodec),
	optionalOf("trace_line", func(d *RequestDetail) **int { return &d.TraceLine }, intCodec),
	optionalOf("session", func(d *RequestDetail) **string { return &d.Session }, stringCodec),
	optionalOf("turn", func(d *RequestDetail) **int { return &d.Turn }, intCodec),
	optionalOf("planned_output_tokens", func(d *RequestDetail) **int { return &d.PlannedOutputTokens }, intCodec),
	optionalOf("counted_output_tokens", func(d *RequestDetail) **int { return &d.CountedOutputTokens }, intCodec),
	optionalOf("cached_prompt_tokens", func(d *RequestDetail) **int { return &d.CachedPromptTokens }, intCodec),
)

var extensionTable = newArtTable(func(x *Extension) *shape { return &x.shape },
	optionalOf("arrival", func(x *Extension) **Arrival { return &x.Arrival }, arrivalTable.codec()),
	optionalOf("audit", func(x *Extension) **Audit { return &x.Audit }, auditTable.codec()),
	optionalOf("chunk_timing", func(x *Extension) **ChunkTiming { return &x.ChunkTiming }, chunkTimingTable.codec()),
	optionalOf("connections", func(x *Extension) **Connections { return &x.Connections }, connectionsTable.codec()),
	optionalOf("context_window", func(x *Extension) **ContextWindow { return &x.ContextWindow }, contextWindowTable.codec()),
	optionalOf("energy", func(x *Extension) **Energy { return &x.Energy }, energyTable.codec()),
	optionalSlice("gpu_metrics", func(x *Extension) *[]ServerMetrics { return &x.GPUMetrics }, serverMetricsTable.codec()),
	optionalOf("prompt_sizing", func(x *Extension) **PromptSizing { return &x.PromptSizing }, promptSizingTable.codec()),
	optionalOf("probe_requests", func(x *Extension) **ProbeRequests { return &x.ProbeRequests }, probeRequestsTable.codec()),
	fieldOf("requests", func(x *Extension) *[]RequestDetail { return &x.Requests }, sliceCodec(requestDetailTable.codec())),
	optionalOf("run", func(x *Extension) **RunSummary { return &x.Run }, runSummaryTable.codec()),
	optionalOf("search", func(x *Extension) **SearchProbe { return &x.Search }, searchTable.codec()),
	optionalOf("server_metrics", func(x *Extension) **ServerMetrics { return &x.ServerMetrics }, serverMetricsTable.codec()),
	optionalOf("shard", func(x *Extension) **Shard { return &x.Shard }, shardTable.codec()),
	optionalOf("shards", func(x *Extension) **ShardSet { return &x.Shards }, shardSetTable.codec()),
	optionalOf("slo", func(x *Extension) **SLOResult { return &x.SLO }, sloTable.codec()),
	optionalOf("steady", func(x *Extension) **Steady { return &x.Steady }, steadyTable.codec()),
	fieldOf("version", func(x *Extension) *int { return &x.Version }, intCodec),
	optionalOf("workload", func(x *Extension) **Workload { return &x.Workload }, workloadTable.codec()),
)

// The members of a trace or sessions workload (workload.go).

var workloadTable = newArtTable(func(w *Workload) *shape { return &w.shape },
	fieldOf("kind", func(w *Workload) *string { return &w.Kind }, stringCodec),
	optionalOf("send_lag_ms", func(w *Workload) **SendLag { return &w.SendLagMS }, sendLagTable.codec()),
	optionalOf("sessions", func(w *Workload) **SessionsWorkload { return &w.Sessions }, sessionsWorkloadTable.codec()),
	optionalOf("trace", func(w *Workload) **TraceWorkload { return &w.Trace }, traceWorkloadTable.codec()),
)

var traceWorkloadTable = newArtTable(func(t *TraceWorkload) *shape { return &t.shape },
	fieldOf("bytes", func(t *TraceWorkload) *int { return &t.Bytes }, intCodec),
	fieldOf("file", func(t *TraceWorkload) *string { return &t.File }, stringCodec),
	fieldOf("first", func(t *TraceWorkload) *int { return &t.First }, intCodec),
	fieldOf("first_line", func(t *TraceWorkload) *int { return &t.FirstLine }, intCodec),
	fieldOf("format", func(t *TraceWorkload) *string { return &t.Format }, stringCodec),
	fieldOf("last_line", func(t *TraceWorkload) *int { return &t.LastLine }, intCodec),
	fieldOf("rows", func(t *TraceWorkload) *int { return &t.Rows }, intCodec),
	fieldOf("sha256", func(t *TraceWorkload) *string { return &t.SHA256 }, stringCodec),
	fieldOf("speed_up", func(t *TraceWorkload) *float64 { return &t.SpeedUp }, floatCodec),
	fieldOf("window_end_ms", func(t *TraceWorkload) **float64 { return &t.WindowEndMS }, optFloatCodec),
	fieldOf("window_start_ms", func(t *TraceWorkload) *float64 { return &t.WindowStartMS }, floatCodec),
)

var sessionsWorkloadTable = newArtTable(func(s *SessionsWorkload) *shape { return &s.shape },
	fieldOf("sessions", func(s *SessionsWorkload) *int { return &s.Sessions }, intCodec),
	fieldOf("spec", func(s *SessionsWorkload) **string { return &s.Spec }, optStringCodec),
	fieldOf("users", func(s *SessionsWorkload) **int { return &s.Users }, optIntCodec),
)

var sendLagTable = newArtTable(func(l *SendLag) *shape { return &l.shape },
	fieldOf("max", func(l *SendLag) *float64 { return &l.Max }, floatCodec),
	fieldOf("p50", func(l *SendLag) *float64 { return &l.P50 }, floatCodec),
	fieldOf("p99", func(l *SendLag) *float64 { return &l.P99 }, floatCodec),
	fieldOf("requests", func(l *SendLag) *int { return &l.Requests }, intCodec),
)

// The members of a sharded workload (shard.go).

var shardTable = newArtTable(func(s *Shard) *shape { return &s.shape },
	fieldOf("clock_domain_id", func(s *Shard) **string { return &s.ClockDomainID }, optStringCodec),
	fieldOf("count", func(s *Shard) *int { return &s.Count }, intCodec),
	fieldOf("host", func(s *Shard) *string { return &s.Host }, stringCodec),
	fieldOf("index", func(s *Shard) *int { return &s.Index }, intCodec),
	fieldOf("plan_fingerprint", func(s *Shard) *string { return &s.PlanFingerprint }, stringCodec),
	fieldOf("start_at_unix_ns", func(s *Shard) *int64 { return &s.StartAtUnixNS }, int64Codec),
)

var shardRecordTable = newArtTable(func(s *ShardRecord) *shape { return &s.shape },
	fieldOf("finished_at_unix_ns", func(s *ShardRecord) *int64 { return &s.FinishedAtUnixNS }, int64Codec),
	fieldOf("host", func(s *ShardRecord) *string { return &s.Host }, stringCodec),
	fieldOf("index", func(s *ShardRecord) *int { return &s.Index }, intCodec),
	optionalOf("server_metrics", func(s *ShardRecord) **ServerMetrics { return &s.ServerMetrics }, serverMetricsTable.codec()),
	fieldOf("sha256", func(s *ShardRecord) *string { return &s.SHA256 }, stringCodec),
	fieldOf("started_at_unix_ns", func(s *ShardRecord) *int64 { return &s.StartedAtUnixNS }, int64Codec),
)

var shardSetTable = newArtTable(func(s *ShardSet) *shape { return &s.shape },
	fieldOf("artifacts", func(s *ShardSet) *[]ShardRecord { return &s.Artifacts }, sliceCodec(shardRecordTable.codec())),
	fieldOf("count", func(s *ShardSet) *int { return &s.Count }, intCodec),
	optionalOf("in_flight", func(s *ShardSet) **ShardInFlight { return &s.InFlight }, shardInFlightTable.codec()),
	fieldOf("plan_fingerprint", func(s *ShardSet) *string { return &s.PlanFingerprint }, stringCodec),
	fieldOf("start_at_unix_ns", func(s *ShardSet) *int64 { return &s.StartAtUnixNS }, int64Codec),
)

var shardInFlightTable = newArtTable(func(s *ShardInFlight) *shape { return &s.shape },
	fieldOf("cap", func(s *ShardInFlight) *int { return &s.Cap }, intCodec),
	fieldOf("over_cap_requests", func(s *ShardInFlight) *int { return &s.OverCapRequests }, intCodec),
	fieldOf("peak", func(s *ShardInFlight) *int { return &s.Peak }, intCodec),
)

var gapSketchTable = newArtTable(func(s *GapSketch) *shape { return &s.shape },
	fieldOf("bins", func(s *GapSketch) *map[int]int { return &s.Bins }, mapCodec(intMapKey, intCodec)),
	fieldOf("count", func(s *GapSketch) *int { return &s.Count }, intCodec),
	fieldOf("max_ns", func(s *GapSketch) *int64 { return &s.MaxNS }, int64Codec),
	fieldOf("relative_accuracy", func(s *GapSketch) *float64 { return &s.RelativeAccuracy }, floatCodec),
	fieldOf("zero", func(s *GapSketch) *int { return &s.Zero }, intCodec),
)

var gapDistributionTable = newArtTable(func(d *GapDistribution) *shape { return &d.shape },
	fieldOf("exact_ns", func(d *GapDistribution) *[]int64 { return &d.ExactNS }, nullableSlice(int64Codec)),
	fieldOf("sketch", func(d *GapDistribution) **GapSketch { return &d.Sketch }, nullableCodec(gapSketchTable.codec())),
)

package artifact

// TimingRow is one successful request in "request_timings" (and a failure's
// "response_timing"). Times are milliseconds from t0, taken from the
// monotonic clock immediately before the request was issued.
//
// Exact-token fields (DecodeTokS, MeanInterTokenLatencyMS,
// MeanTimePerOutputTokenMS, TPOTMS) are nil when OutputTokenSource is not
// SourceUsage, when decode tokens (output tokens - 1) are <= 0, or when
// GenerationMS <= 0. Legacy rows carry 11 or 15 of the 20 keys; a row read
// from them writes back those keys only.
type TimingRow struct {
	RequestIndex         int // "request_index"
	PlannedContextTokens int // "planned_context_tokens"
	// PromptTokens is "prompt_tokens" (usage.prompt_tokens); nil without usage.
	PromptTokens *int
	// OutputTokens is "output_tokens": usage.completion_tokens; nil when
	// the response carried no usage (OutputTokenSource SourceContentChunks,
	// whose count is ContentChunks), as the reference writes it. Older
	// artifacts may hold the chunk count there instead.
	OutputTokens      *int
	OutputTokenSource OutputTokenSource // "output_token_source"
	ContentChunks     int               // "content_chunks"
	ReasoningChunks   int               // "reasoning_chunks"

	// TimeToFirstOutputMS is "time_to_first_output_ms" (TTFO): t0 to the
	// first non-empty reasoning or content delta.
	TimeToFirstOutputMS float64
	TTFTMS              float64 // "ttft_ms": t0 to the first non-empty content delta
	E2EMS               float64 // "e2e_ms": t0 to the end of the stream
	GenerationMS        float64 // "generation_ms": E2EMS - TimeToFirstOutputMS
	VisibleGenerationMS float64 // "visible_generation_ms": E2EMS - TTFTMS

	// EffectivePrefillTokS is "effective_prefill_tok_s": prompt tokens per
	// TTFO second; nil without prompt tokens or when TTFO is 0.
	EffectivePrefillTokS *float64
	// DecodeTokS is "decode_tok_s": decode tokens per generation second.
	DecodeTokS *float64
	// TPOTMS is "tpot_ms": generation ms per decode token.
	TPOTMS *float64
	// MeanTimePerOutputTokenMS is "mean_time_per_output_token_ms" (= TPOTMS).
	MeanTimePerOutputTokenMS *float64
	// MeanInterTokenLatencyMS is "mean_inter_token_latency_ms", the legacy
	// name of TPOTMS (a TPOT proxy, not raw inter-token latency).
	MeanInterTokenLatencyMS *float64

	// VisibleContentTruncated is "visible_content_truncated": the bounded
	// capture of visible text overflowed.
	VisibleContentTruncated bool
	// RequestCanary is "request_canary"; nil when canaries are off.
	RequestCanary *CanaryCheck
	// ControlledOutput is "controlled_output"; nil when response words is 0.
	ControlledOutput *ControlledOutputCheck

	shape shape
}

// tokenTimeKeys are the keys of a row's times to and between tokens,
// which a row of an answer that generates no token (an embeddings answer)
// does not have.
var tokenTimeKeys = [...]string{"time_to_first_output_ms", "ttft_ms", "generation_ms", "visible_generation_ms"}

// OmitTokenTimes makes r the row of an answer that generates no token (an
// embeddings answer): it has no time_to_first_output_ms, ttft_ms,
// generation_ms or visible_generation_ms (absent, not zero: the row
// writes none of them and the run's distributions take none from it), and
// its e2e_ms is the answer's latency.
func (r *TimingRow) OmitTokenTimes() {
	r.TimeToFirstOutputMS, r.TTFTMS, r.GenerationMS, r.VisibleGenerationMS = 0, 0, 0, 0
	r.shape = rowTable.without(tokenTimeKeys[:]...)
}

// TokenTimed reports whether r has its times to tokens: false for the row
// of an answer that generates none (OmitTokenTimes), true for every other.
func (r *TimingRow) TokenTimed() bool { return r.shape.has("ttft_ms") }

// CanaryCheck is a "request_canary" object: whether the response began with
// its own synthetic marker and carried no peer's.
type CanaryCheck struct {
	Marker              string // "marker": ANVIL_REQ_{seed}_{index:05d}
	MarkerAtStart       bool   // "marker_at_start"
	ObservedMarkerCount int    // "observed_marker_count": own marker occurrences
	ForeignMarkerCount  int    // "foreign_marker_count": other ANVIL_REQ_ markers
	CaptureComplete     bool   // "capture_complete": the bounded capture held it all
	Passed              bool   // "passed"

	shape shape
}

// ControlledOutputCheck is a "controlled_output" object: adherence to the
// request for exactly RequestedWords lowercase words "code".
type ControlledOutputCheck struct {
	RequestedWords     int  // "requested_words"
	ObservedCodeWords  int  // "observed_code_words"
	ObservedExtraWords int  // "observed_extra_words"
	CaptureComplete    bool // "capture_complete"
	// ExactAdherence is "exact_adherence"; nil when the capture is
	// incomplete (unobservable).
	ExactAdherence *bool
	Policy         string // "policy": observe or strict
	Passed         bool   // "passed"

	shape shape
}

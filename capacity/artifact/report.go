package artifact

import "github.com/anvilbench/anvil/capacity/internal/jsonstr"

// This file holds the anvil-serving.benchmark/v1 document: the Report and the
// small objects it is made of. Every JSON key is written by the artifact
// encoder in json.go; the Go field names follow the keys.

// Schema is the value of the artifact's "schema" key.
const Schema = "anvil-serving.benchmark/v1"

// Measurement protocols written in "measurement_protocol". A run that saw any
// reasoning chunk is protocolV4Reasoning, any other run protocolV3. Older
// artifacts carry "capacity-v2" or no protocol at all.
const (
	protocolV3          = "capacity-v3"
	protocolV4Reasoning = "capacity-v4-reasoning"
)

// maxErrorMessageRunes is the longest failure "error_message", counted in
// Unicode code points; Failure.SetErrorMessage enforces it.
const maxErrorMessageRunes = 2048

// maxErrorMessageJSONBytes bounds the JSON-escaped form of an
// "error_message" (quotes excluded). maxErrorMessageRunes characters that
// each take a two-byte escape (quote, backslash, newline, tab...) fit
// exactly; text of six-byte control escapes or four-byte runes is cut
// earlier. With it, the largest artifact the bounds allow (16,384
// failed requests) stays under the reader's limit, MaxBytes.
const maxErrorMessageJSONBytes = 2 * maxErrorMessageRunes

// FailureClass says why a request is not a latency sample (capacity/PROTOCOL.md#failure-classes).
type FailureClass string

// The failure classes of the v1 artifact.
const (
	// FailureRequestError: connect refused, DNS, TLS, request write error.
	FailureRequestError FailureClass = "request_error"
	// FailureHTTPError: HTTP status >= 400; Failure.HTTPStatus is set.
	FailureHTTPError FailureClass = "http_error"
	// FailureTimeout: no headers in time, stream stalled, total timeout.
	FailureTimeout FailureClass = "timeout"
	// FailureCancelled: the run was cancelled before the request finished.
	FailureCancelled FailureClass = "cancelled"
	// FailureStreamValidation: the stream broke the SSE/OpenAI contract,
	// carried no visible content, or its usage reported fewer prompt tokens
	// than half of the plan (a truncated prompt; capacity/PROTOCOL.md#stream_validation_failed).
	FailureStreamValidation FailureClass = "stream_validation_failed"
	// FailureRequestCanary: the response did not begin with its own marker,
	// carried a peer's marker, or its capture was truncated.
	FailureRequestCanary FailureClass = "request_canary_failed"
	// FailureControlledOutput: not exactly N words under the strict policy.
	FailureControlledOutput FailureClass = "controlled_output_failed"
	// FailureRunnerError: a defect of the benchmark itself (a worker panic).
	FailureRunnerError FailureClass = "runner_error"
	// FailureEmbeddingsInvalid: an embeddings answer whose vectors are not
	// what was asked (another number than the inputs, two lengths, a
	// value that is not a finite number): anvil-go's own class, beside
	// the reference's.
	FailureEmbeddingsInvalid FailureClass = "embeddings_invalid"
)

// ErrorTypeInvalidUsage is the error_type of a response whose usage count
// is negative, not an integer, or impossible for the request: its prompt
// count judges no plan (PlanCounts).
const ErrorTypeInvalidUsage = "invalid_usage"

// OutputTokenSource says where a row's output token count came from.
type OutputTokenSource string

// Output token sources.
const (
	// SourceUsage: usage.completion_tokens reported by the server (exact).
	SourceUsage OutputTokenSource = "usage"
	// SourceContentChunks: no usage; the count of content chunks stands in
	// and every exact-token field is null.
	SourceContentChunks OutputTokenSource = "content_chunks"
)

// Report is one capacity run: the anvil-serving.benchmark/v1 artifact.
//
// Nullable JSON values are pointers (nil is null). A Report built in Go has
// the full current shape: every key of capacity/PROTOCOL.md#artifact-keys is written. A Report
// read from JSON remembers exactly which keys the document had, at every
// level, and writes back those keys only, plus any unknown key verbatim, so a
// legacy artifact round-trips unchanged.
//
// Fill the run fields, then call Recompute to derive Metrics,
// MetricPopulation, PerformanceEligible and MeasurementProtocol.
type Report struct {
	Schema string // "schema": always Schema

	RunID     string // "run_id": benchmark-YYYYMMDDTHHMMSSZ
	StartedAt string // "started_at": ISO 8601 UTC, truncated to the second
	// StartedAtUnixNS is "started_at_unix_ns" (wall clock, int64 exact).
	StartedAtUnixNS  int64
	FinishedAt       string // "finished_at": ISO 8601 UTC, truncated to the second
	FinishedAtUnixNS int64  // "finished_at_unix_ns"
	// TimestampPrecision is "timestamp_precision", one fixed sentence.
	TimestampPrecision string
	WallClockMS        float64 // "wall_clock_ms": monotonic run duration
	// ClockDomainID is "clock_domain_id", an operator label or nil.
	ClockDomainID *string

	// Identity.
	BaseURL                  string  // "base_url": credentials removed; free text on read
	Model                    string  // "model"
	Engine                   *string // "engine"
	GPU                      *string // "gpu"
	Tier                     *string // "tier"
	Manifest                 *string // "manifest"
	SourceRecipe             *string // "source_recipe"
	ConfigurationFingerprint *string // "configuration_fingerprint": sha256:<64 hex> or nil

	// Workload.
	Requests    int // "requests": planned requests
	Concurrency int // "concurrency"
	MaxTokens   int // "max_tokens"
	// ContextTokens is "context_tokens"; nil when contexts are sampled.
	ContextTokens *int
	// MaxContextTokens is "max_context_tokens", the model length used; nil
	// when unknown.
	MaxContextTokens *int
	ContextSeed      int64 // "context_seed"
	// ContextDistribution is "context_distribution": planned context -> count.
	ContextDistribution    map[int]int
	SharedPrefixTokens     int        // "shared_prefix_tokens"
	PromptCacheMode        string     // "prompt_cache_mode": shared or unique
	RequestCanaries        bool       // "request_canaries"
	ResponseWords          int        // "response_words"
	ControlledOutputPolicy string     // "controlled_output_policy": observe or strict
	ServeFlags             ServeFlags // "serve_flags"
	Sampling               Sampling   // "sampling"

	// Outcome.
	Completed           int  // "completed": successful requests
	Failed              int  // "failed": len(Failures)
	ResponsesReceived   int  // "responses_received"
	PerformanceEligible bool // "performance_eligible"; set by Recompute
	// MeasurementProtocol is "measurement_protocol"; set by Recompute:
	// "capacity-v4-reasoning" for a run that saw a reasoning chunk, else
	// "capacity-v3" (older artifacts: "capacity-v2" or none).
	MeasurementProtocol string
	RequestTimings      []TimingRow      // "request_timings": successful rows
	Failures            []Failure        // "failures": sorted by request index
	Metrics             Metrics          // "metrics"; set by Recompute
	MetricPopulation    MetricPopulation // "metric_population"; set by Recompute
	// TimingMethodology is "timing_methodology": metric name -> one
	// sentence saying how it is measured.
	TimingMethodology map[string]string

	// AnvilGo is "anvil_go", the extension object (extension.go): what
	// this module measures beyond the v1 keys. Nil: absent (an artifact of
	// the reference tool, or of a Report built without it).
	AnvilGo *Extension

	shape shape
}

// ServeFlags is the "serve_flags" object.
type ServeFlags struct {
	ThinkingMode      string  // "thinking_mode": default, enabled, disabled, unsupported
	NoThinking        bool    // "no_thinking": true exactly when thinking is disabled
	ReasoningEffort   *string // "reasoning_effort": nil or none..max
	SharedPrefixBurst bool    // "shared_prefix_burst": burst > 0

	shape shape
}

// Sampling is the "sampling" object, one entry per sampling parameter.
type Sampling struct {
	Temperature SamplingField // "temperature"
	TopP        SamplingField // "top_p"

	shape shape
}

// SamplingField records one sampling parameter. A parameter the user did not
// set is the zero value: {requested: null, sent: false, effective_request: null}.
type SamplingField struct {
	Requested        *float64 // "requested": what the user asked for
	Sent             bool     // "sent": whether it went into the request body
	EffectiveRequest *float64 // "effective_request": the value sent

	shape shape
}

// MetricPopulation is the "metric_population" object: which requests the
// distributions are over and how to read their p99.
type MetricPopulation struct {
	AggregateThroughputEligible bool   // "aggregate_throughput_eligible"
	AttemptedRequests           int    // "attempted_requests"
	ExcludedRequests            int    // "excluded_requests"
	FailurePolicy               string // "failure_policy": fixed sentence
	P99Interpretation           string // "p99_interpretation"
	// P99InterpretationByMetric is "p99_interpretation_by_metric".
	P99InterpretationByMetric    map[string]string
	P99MinimumRecommendedSamples int            // "p99_minimum_recommended_samples"
	P99SamplesByMetric           map[string]int // "p99_samples_by_metric"
	PerformanceEligibleRequests  int            // "performance_eligible_requests"
	SuccessfulRequests           int            // "successful_requests"

	shape shape
}

// Failure is one row of "failures": a request that is not a latency sample.
// Legacy artifacts carry only request_index and error_type (and sometimes
// the message keys); a Failure read from them writes back those keys only.
type Failure struct {
	RequestIndex         int          // "request_index"
	PlannedContextTokens int          // "planned_context_tokens"
	FailureClass         FailureClass // "failure_class"
	ErrorType            string       // "error_type": Go type or short kind
	// ErrorMessage is "error_message", at most 2048 code points and 4096
	// bytes escaped (capacity/PROTOCOL.md#failure-classes; SetErrorMessage
	// cuts it).
	ErrorMessage          string
	ErrorMessageTruncated bool    // "error_message_truncated"
	ResponseReceived      bool    // "response_received"
	PerformanceEligible   bool    // "performance_eligible": always false
	ElapsedMS             float64 // "elapsed_ms"
	HTTPStatus            *int    // "http_status": nil without one
	// ResponseTiming is "response_timing": the timing row of a response
	// that arrived but failed validation, else nil.
	ResponseTiming *TimingRow
	// ResponseMetadata is "response_metadata"; nil when no response arrived.
	ResponseMetadata *ResponseMetadata
	// RequestCanary is "request_canary": the canary check of a response
	// that has no ResponseTiming (a timing row carries its own check, which
	// is not repeated here). The key is written only when non-nil, or when
	// a read document had it.
	RequestCanary *CanaryCheck
	// ControlledOutput is "controlled_output"; set and written like
	// RequestCanary.
	ControlledOutput *ControlledOutputCheck

	shape shape
}

// ResponseMetadata is a failure's "response_metadata": what the response
// carried, without its text.
type ResponseMetadata struct {
	OutputTokenSource OutputTokenSource // "output_token_source"
	ContentChunks     int               // "content_chunks"
	ReasoningChunks   int               // "reasoning_chunks"
	FinishReasons     []string          // "finish_reasons"
	// StreamTerminalObserved is "stream_terminal_observed": [DONE] arrived.
	StreamTerminalObserved  bool
	VisibleContentTruncated bool   // "visible_content_truncated"
	Usage                   *Usage // "usage": nil when the response had none

	shape shape
}

// Usage is the token usage a response reported; nil counts were absent.
type Usage struct {
	PromptTokens     *int // "prompt_tokens"
	CompletionTokens *int // "completion_tokens"
	TotalTokens      *int // "total_tokens"

	shape shape
}

// SetErrorMessage sets f.ErrorMessage to msg cut on a rune boundary to at
// most 2048 code points whose JSON-escaped form takes at most 4096 bytes,
// and f.ErrorMessageTruncated to whether it cut anything. An invalid UTF-8
// byte counts as one code point (written as U+FFFD).
func (f *Failure) SetErrorMessage(msg string) {
	f.ErrorMessage, f.ErrorMessageTruncated = cutErrorMessage(msg)
}

// cutErrorMessage cuts msg on a rune boundary to at most
// maxErrorMessageRunes code points whose JSON-escaped form takes at most
// maxErrorMessageJSONBytes bytes, and reports whether it cut anything.
func cutErrorMessage(msg string) (cut string, truncated bool) {
	runes, size := 0, 0
	for i, r := range msg {
		if runes == maxErrorMessageRunes {
			return msg[:i], true
		}
		size += jsonstr.EscapedLen(r)
		if size > maxErrorMessageJSONBytes {
			return msg[:i], true
		}
		runes++
	}
	return msg, false
}

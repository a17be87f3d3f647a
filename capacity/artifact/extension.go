package artifact

import (
	"cmp"
	"slices"

	"github.com/anvilbench/anvil/stats"
)

// This file holds the "anvil_go" extension object: everything this module
// measures that the v1 schema has no key for. It is one top-level key, so
// the reference tool (which ignores unknown keys) reads our artifacts, and
// every v1 key keeps its meaning. Each member is documented key by key in
// capacity/PROTOCOL.md#anvil-go. Times are milliseconds; "offsets" are
// milliseconds since the start of the measured campaign (the monotonic
// reading taken after warm-up and connection pre-warming).

// extensionVersion is the value of "anvil_go.version" this module writes.
const extensionVersion = 1

// Outcomes of a request in Extension.Requests besides the failure classes.
const (
	// OutcomeSuccess: the request is a timing row of request_timings.
	OutcomeSuccess = "success"
	// OutcomeNeverSent: the run stopped before the request was issued (it
	// is also a "cancelled" failure of the v1 document).
	OutcomeNeverSent = "never_sent"
)

// Extension is the "anvil_go" object. A nil member is absent from the
// document (not measured, or not applicable to the run).
type Extension struct {
	Version      int           // "version": 1, the version this module writes
	Run          *RunSummary   // "run"
	Arrival      *Arrival      // "arrival": open-loop runs only
	SLO          *SLOResult    // "slo": when an SLO was evaluated
	Search       *SearchProbe  // "search": when the run is a probe of a search
	ChunkTiming  *ChunkTiming  // "chunk_timing": inter-token latency of the run
	PromptSizing *PromptSizing // "prompt_sizing"
	// ContextWindow is "context_window": where the window the run planned
	// for came from, and what the server advertised.
	ContextWindow *ContextWindow
	Connections   *Connections // "connections"
	// ServerMetrics is "server_metrics": the server's /metrics sampled
	// during the measured phase (extension_observers.go).
	ServerMetrics *ServerMetrics
	// Audit is "audit": the client's self-audit (extension_observers.go).
	Audit *Audit
	// Steady is "steady": the steady-state window of the measured phase
	// (steady.go); nil when the run has no requests to test.
	Steady *Steady
	// ProbeRequests is "probe_requests": the short requests sent beside
	// the measured phase (probe_requests.go); nil when the run sent none.
	ProbeRequests *ProbeRequests
	// GPUMetrics is "gpu_metrics": each GPU metrics endpoint (NVIDIA's
	// DCGM exporter) sampled during the measured phase, in the order
	// given (gpu.go); nil without one.
	GPUMetrics []ServerMetrics
	// Energy is "energy": the GPUs' energy over the phase and per token
	// (gpu.go); nil without GPU metrics.
	Energy *Energy
	// Shard is "shard": the run is one shard of a workload split over
	// several processes (shard.go); nil for a whole run.
	Shard *Shard
	// Shards is "shards": the artifact is the merge of these shards
	// (package capacity/merge); nil otherwise.
	Shards *ShardSet
	// Workload is "workload": the trace or sessions the measured requests
	// came from (workload.go); nil for the synthetic plan.
	Workload *Workload
	// Requests is "requests": one object per planned request, sorted by
	// request index.
	Requests []RequestDetail

	shape shape
}

// APIs returns the values of RunSummary.API, in the order
// capacity/PROTOCOL.md#apis documents them: chat completions first.
func APIs() []string { return []string{APIChat, "responses", "messages", "completions", "embeddings"} }

// APIChat is chat completions, the API of every artifact without
// anvil_go.run.api.
const APIChat = "chat"

// APIOf returns the API r spoke: RunSummary.API, or APIChat when r records
// none.
func APIOf(r *Report) string {
	if r.AnvilGo != nil && r.AnvilGo.Run != nil && r.AnvilGo.Run.API != nil {
		return *r.AnvilGo.Run.API
	}
	return APIChat
}

// RunSummary is "anvil_go.run": what was actually sent. The v1 document
// counts a planned request the run never issued as a "cancelled" failure;
// these counts tell the two apart.
type RunSummary struct {
	// API is "api", written by every run of this version: the API the run
	// spoke, one of APIs() ("chat", "responses", "messages", "completions",
	// "embeddings"); an artifact without it spoke chat.
	API *string
	// AbsentTimings is "absent_timings", written only when set: why the
	// run's rows have no times to tokens (TimingRow.TokenTimed false), in
	// one sentence: its API generates none (embeddings).
	AbsentTimings     *string
	SentRequests      int  // "sent_requests": measured requests issued
	NeverSentRequests int  // "never_sent_requests": planned, never issued
	Interrupted       bool // "interrupted": the run was cancelled or stopped early
	// DurationMS is "duration_ms": the time budget of a closed-loop
	// Duration campaign (Workload.Duration), whose request count is then a
	// result; nil for a fixed request count and for open loops (whose
	// schedule fixes the count).
	DurationMS *float64
	// Benchmark is "benchmark", written only when set: the name go test
	// printed for the benchmark that made the run (package anviltest,
	// GOMAXPROCS suffix included), by which reporters name its benchfmt
	// result.
	Benchmark *string
	// StopReason is "stop_reason", written only when set: why the run
	// stopped before its plan was done by a rule of its own (the early
	// stop of capacity/PROTOCOL.md#early-stop).
	StopReason *string
	// ExtraBody is "extra_body", written only when set: each field the
	// target merged into every request body (capacity.Target.ExtraBody,
	// e.g. llama.cpp's cache_prompt) with its value as compact JSON,
	// scrubbed of the run's credentials (a value over 1024 bytes as
	// "sha256:<hex> (<n> bytes)"). Runs with different extra bodies are
	// different workloads.
	ExtraBody map[string]string
	// ModuleVersion is "module_version", written only when known: the
	// version of this module (github.com/anvilbench/anvil) in the binary
	// that made the run, as runtime/debug.ReadBuildInfo reports it: a
	// release (v0.4.0) or pseudo-version (v0.0.0-20261201221049-e02e9a91af51)
	// when the module is a dependency or a stamped build, "(devel)" for a
	// build of a checkout that is not stamped (go test binaries never are).
	// See RecordBuild.
	ModuleVersion *string
	// VCSRevision is "vcs_revision", written only when known: the commit
	// the binary was built from, from the build's vcs.revision stamp, or
	// the 12-digit revision prefix of a pseudo-version.
	VCSRevision *string
	// VCSModified is "vcs_modified", written only when the build was
	// stamped: the checkout had uncommitted changes.
	VCSModified *bool
	// GoVersion is "go_version", written only when known: the Go release
	// that built the binary (go1.26.0).
	GoVersion *string
	// Warmup is "warmup", written only when the run warmed up: the rule
	// it followed, "count" (Workload.Warmup), "time" (WarmupFor) or
	// "steady" (WarmupSteady). WarmupRequests and WarmupMS are
	// "warmup_requests" and "warmup_ms": the warm-up requests sent and how
	// long the warm-up took; WarmupSteady is "warmup_steady", for the
	// "steady" rule: whether the warm-up's requests reached a steady
	// window before its limit (capacity/PROTOCOL.md#warm-up).
	Warmup         *string
	WarmupRequests *int
	WarmupMS       *float64
	WarmupSteady   *bool

	shape shape
}

// Arrival is "anvil_go.arrival", the schedule of an open-loop run.
type Arrival struct {
	Process string  // "process": constant, poisson or gamma
	RateRPS float64 // "rate_rps": the requested rate
	// Burstiness is "burstiness": the gamma shape (1 for poisson); nil for
	// constant arrivals.
	Burstiness *float64
	Seed       int64 // "seed": the schedule's seed
	// OfferedRPS is "offered_rps": the schedule's rate, intervals over its
	// span; nil with fewer than two requests.
	OfferedRPS *float64
	// AchievedRPS is "achieved_rps": the same over the actual send times.
	AchievedRPS *float64
	MaxInFlight int // "max_in_flight": the cap on requests in flight

	shape shape
}

// SLOResult is "anvil_go.slo": a service-level objective evaluated on the
// run. A request meets it when every bound that is set holds for it;
// failed requests never do.
type SLOResult struct {
	TTFTMS       *float64 // "ttft_ms": the TTFT bound, nil when not set
	TPOTMS       *float64 // "tpot_ms": the TPOT bound, nil when not set
	E2EMS        *float64 // "e2e_ms": the E2E bound, nil when not set
	Attainment   float64  // "attainment": the share of requests that must meet it
	MetRequests  int      // "met_requests": requests meeting every set bound
	Attained     float64  // "attained": met requests / planned requests
	Passed       bool     // "passed": attained >= attainment
	GoodputRPS   float64  // "goodput_rps": met requests per second of wall time
	LatencyClock string   // "latency_clock": "scheduled" (open loop) or "sent"

	shape shape
}

// SearchProbe is "anvil_go.search": the run is one probe of an SLO search.
type SearchProbe struct {
	Kind  string  // "kind": concurrency or rate
	Probe int     // "probe": 0-based probe number in the search
	Value float64 // "value": the concurrency or rate probed
	// Repeat is "repeat", written only when the search repeats each
	// value (capacity.SearchSpec.Repeats > 1): the 0-based run of Value.
	Repeat *int

	shape shape
}

// Quantiles is an inter-token latency distribution in milliseconds.
type Quantiles struct {
	P50  float64 // "p50"
	P90  float64 // "p90"
	P99  float64 // "p99"
	P999 float64 // "p999" (run level only)
	Max  float64 // "max"

	shape shape
}

// StallRule is "anvil_go.chunk_timing.stall_rule": a gap is a stall when it
// exceeds max(Relative x the stream's median gap, FloorMS), or OverrideMS
// alone when that is set.
type StallRule struct {
	Relative   float64  // "relative"
	FloorMS    float64  // "floor_ms"
	OverrideMS *float64 // "override_ms": Workload.StallThreshold, nil when unset

	shape shape
}

// ChunkTiming is "anvil_go.chunk_timing": the gaps between consecutive
// output events (reasoning or content) of all successful requests.
type ChunkTiming struct {
	ITLMS         Quantiles // "itl_ms"
	Gaps          int       // "gaps": gaps in the distribution
	Exact         bool      // "exact": nearest-rank exact (else from the sketch)
	RelativeError float64   // "relative_error": the sketch's accuracy, 0 when exact
	Stalls        int       // "stalls"
	StallRule     StallRule // "stall_rule"
	// PerToken is "per_token": the gaps are per token, the server having
	// reported usage on every chunk (vLLM's continuous_usage_stats), each
	// chunk's gap split over its tokens; false: gaps between chunks.
	PerToken bool
	// TokensPerChunkMean is "tokens_per_chunk_mean": the mean over requests
	// with usage of completion tokens / output chunks; nil when none.
	TokensPerChunkMean *float64
	// Distribution is "distribution", written only when set: the gaps
	// themselves, which a shard's artifact carries so that package
	// capacity/merge can recompute the percentiles of the whole workload.
	Distribution *GapDistribution

	shape shape
}

// PromptSizing is "anvil_go.prompt_sizing": how prompts were sized, and
// the plan check of the server's counts (capacity/PROTOCOL.md#plan-check).
type PromptSizing struct {
	Method string // "method": reference or exact
	// Source is "source": tokenize or calibration for exact sizing, nil for
	// reference sizing.
	Source *string
	// TokenizePath is "tokenize_path": the endpoint used, nil when none.
	TokenizePath        *string
	CharsPerToken       float64 // "chars_per_token": the ratio the prompts were built with
	CalibrationRequests int     // "calibration_requests": unmeasured requests sent to learn it
	// TemplateTokens is "template_tokens": the chat template's fixed
	// tokens in a request of one user message: as exact sizing learned
	// them, or as the counts of a reference run hold them (estimated, and
	// taken off each count before it is judged); nil when unknown.
	TemplateTokens *int
	// Tolerance and ToleranceTokens are "tolerance" and
	// "tolerance_tokens": a prompt whose count misses its plan by more
	// than Tolerance of it (0.02 for exact sizing, 0.25 for reference
	// sizing) and more than ToleranceTokens tokens (4) is off plan.
	Tolerance       float64
	ToleranceTokens int
	// MaxRelativeError is "max_relative_error": max |counted - planned| /
	// planned over the requests the server counted and the check judged
	// (a reference run's counts less TemplateTokens); nil when none.
	MaxRelativeError *float64
	// CountedRequests is "counted_requests": the measured requests whose
	// prompt the server counted (usage.prompt_tokens, or the count of an
	// over-window refusal).
	CountedRequests int
	// CountedOverPlanned is "counted_over_planned": the median of counted /
	// planned over the requests judged; nil when none.
	CountedOverPlanned *float64
	// OffPlanRequests is "off_plan_requests": judged requests whose count
	// misses the plan by more than Tolerance and ToleranceTokens.
	OffPlanRequests int
	// UnsizableRequests is "unsizable_requests": under exact sizing, the
	// counted requests planned below what their least prompt counts (the
	// chat template's fixed tokens and their closing instruction): sent at
	// that least prompt and not judged.
	UnsizableRequests int
	// Warning is "warning": what the run says when it is off plan (how far
	// the prompts were from their plan, and what to do); nil otherwise.
	// Under exact sizing it is set exactly when OffPlanRequests > 0, and
	// the run is then not performance eligible.
	Warning *string

	shape shape
}

// OffPlan reports whether p makes its run not performance eligible:
// exact sizing that missed the plan (OffPlanRequests > 0).
func (p *PromptSizing) OffPlan() bool {
	return p != nil && p.Method == "exact" && p.OffPlanRequests > 0
}

// SetCountedOverPlanned sets CountedOverPlanned to the median of ratios
// (counted / planned of each counted request; the mean of the two middle
// ones for an even count), or nil when there are none. It sorts ratios.
// One run and a merge of its shards compute it the same way.
func (p *PromptSizing) SetCountedOverPlanned(ratios []float64) {
	if len(ratios) == 0 {
		p.CountedOverPlanned = nil
		return
	}
	slices.Sort(ratios)
	median := stats.Median(ratios)
	p.CountedOverPlanned = &median
}

// ContextWindow is "anvil_go.context_window": the window the run planned
// for, where it came from, and the window the truncation checks used.
type ContextWindow struct {
	// Tokens is "tokens": the window the plan used (max_context_tokens).
	Tokens int
	// Source is "source": where Tokens came from: "Target.MaxModelLen"
	// (declared), "/models", "/props", "/api/ps" or "/api/show".
	Source string
	// Advertised is "advertised": the window the server advertised; nil
	// when it advertised none.
	Advertised *int
	// AdvertisedSource is "advertised_source": the endpoint of Advertised;
	// nil with it.
	AdvertisedSource *string
	// TruncationWindow is "truncation_window": the window the truncation
	// checks used (a count at or above it is a prompt cut to the window).
	TruncationWindow int
	// Slots is "slots", written only when known: how many requests the
	// server runs at once (llama.cpp's --parallel); SlotsSource is
	// "slots_source", where it came from ("/props" or "/slots").
	Slots       *int
	SlotsSource *string
	// Note is "note": a declared window that disagrees with the advertised
	// one, and a concurrency above Slots, named; nil when there is
	// nothing to say.
	Note *string

	shape shape
}

// Connections is "anvil_go.connections": what the client did with
// connections around the clock.
type Connections struct {
	Prewarmed           int // "prewarmed": live connections opened before the clock
	DialedInMeasurement int // "dialed_in_measurement": measured requests that dialed
	Retried             int // "retried": requests sent again (capacity/PROTOCOL.md#connection-rule)
	// KeptAliveClosed is "kept_alive_closed": times the server was seen
	// closing a kept-alive connection right after answering on it (at once,
	// or under the next request without answering it).
	KeptAliveClosed int
	// ReuseDisabled is "reuse_disabled": from the first such close on,
	// the run's requests were sent without connection reuse, each dialing
	// inside its own timings.
	ReuseDisabled bool

	shape shape
}

// RequestDetail is one object of "anvil_go.requests".
type RequestDetail struct {
	RequestIndex int    // "request_index"
	Outcome      string // "outcome": OutcomeSuccess, OutcomeNeverSent or a failure class
	// ScheduledMS is "scheduled_ms": the offset the request was due (open
	// loop: its scheduled time; closed loop: when a worker took it).
	ScheduledMS *float64
	SentMS      *float64 // "sent_ms": the offset of t0; nil when never sent
	QueueMS     *float64 // "queue_ms": sent - scheduled
	EndMS       *float64 // "end_ms": the offset the response ended or failed
	// FirstOutputMS is "first_output_ms": the offset of the first reasoning
	// or content event.
	FirstOutputMS  *float64
	FirstContentMS *float64 // "first_content_ms": the offset of the first content event
	// ScheduledTTFTMS and ScheduledE2EMS are "scheduled_ttft_ms" and
	// "scheduled_e2e_ms": TTFT and E2E from the scheduled time, free of
	// coordinated omission.
	ScheduledTTFTMS *float64
	ScheduledE2EMS  *float64
	Phases          *Phases    // "phases": connection and response phases
	ITLMS           *Quantiles // "itl_ms": the request's own gaps (no p999)
	OutputChunks    int        // "output_chunks": reasoning + content events
	Stalls          int        // "stalls"
	// TokensPerChunk is "tokens_per_chunk": completion tokens / output
	// chunks, nil without usage.
	TokensPerChunk      *float64
	PlannedPromptTokens int  // "planned_prompt_tokens": the planned context
	CountedPromptTokens *int // "counted_prompt_tokens": as the server counted
	// LeastPromptTokens is "least_prompt_tokens", written only for a
	// request exact sizing could not size for its plan: what its least
	// prompt counts (the chat template's fixed tokens and its closing
	// instruction alone count more than the plan).
	LeastPromptTokens *int
	// The keys of a request from a Workload.Source (a trace, a session),
	// written only when set (workload.go).
	//
	// TraceLine is "trace_line": the line of the request's trace row.
	TraceLine *int
	// Session and Turn are "session" and "turn": the session's id and the
	// request's 1-based turn in it.
	Session *string
	Turn    *int
	// PlannedOutputTokens is "planned_output_tokens": the max_tokens sent.
	PlannedOutputTokens *int
	// CountedOutputTokens is "counted_output_tokens":
	// usage.completion_tokens as the server counted them.
	CountedOutputTokens *int
	// CachedPromptTokens is "cached_prompt_tokens":
	// usage.prompt_tokens_details.cached_tokens, the prompt tokens the
	// server's prefix cache served.
	CachedPromptTokens *int
	// ServerTimings is "server_timings": what the server measured itself,
	// nil when it reported nothing.
	ServerTimings *ServerTimings

	shape shape
}

// Phases is "anvil_go.requests[i].phases", from net/http/httptrace, in
// milliseconds after t0.
type Phases struct {
	// ConnectMS is "connect_ms": dial (and TLS) time when the request had to
	// open a connection, nil on a reused one.
	ConnectMS      *float64
	GotConnMS      float64  // "got_conn_ms": the connection was obtained
	WroteRequestMS *float64 // "wrote_request_ms": the request was written
	FirstByteMS    *float64 // "first_byte_ms": the first response byte arrived
	FirstEventMS   *float64 // "first_event_ms": the first SSE event arrived
	Reused         bool     // "reused": a kept-alive connection was reused
	Retried        bool     // "retried": sent again after a failed attempt
	// FailedAttempt is "failed_attempt": the first attempt of a request
	// sent again, nil when it was sent once. Every phase above is the last
	// attempt's, all in ms after the first attempt's t0.
	FailedAttempt *FailedAttempt

	shape shape
}

// FailedAttempt is "anvil_go.requests[i].phases.failed_attempt": an
// attempt that ended without a response byte and was sent again, in ms
// after the request's t0 (which is this attempt's).
type FailedAttempt struct {
	ConnectMS      *float64 // "connect_ms": its dial (and TLS), nil on a reused connection
	GotConnMS      float64  // "got_conn_ms": it obtained its connection
	WroteRequestMS *float64 // "wrote_request_ms": it was completely written, nil when not
	Reused         bool     // "reused": its connection came from the keep-alive pool
	// EndedMS is "ended_ms": the next attempt began (the failure was seen
	// at or before then).
	EndedMS float64

	shape shape
}

// Request returns the detail of request index i, or nil. Requests must be
// sorted by request index, as written.
func (x *Extension) Request(i int) *RequestDetail {
	if x == nil {
		return nil
	}
	j, ok := slices.BinarySearchFunc(x.Requests, i, func(d RequestDetail, i int) int { return cmp.Compare(d.RequestIndex, i) })
	if !ok {
		return nil
	}
	return &x.Requests[j]
}

// Extension returns r's anvil_go object, first setting r.AnvilGo to an
// empty one of the version this module writes when r has none.
func (r *Report) Extension() *Extension {
	if r.AnvilGo == nil {
		r.AnvilGo = &Extension{Version: extensionVersion}
	}
	return r.AnvilGo
}

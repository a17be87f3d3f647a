package capacity

import "time"

// Reference defaults and bounds of a Workload (capacity/PROTOCOL.md#bounds). Each is
// defined once here; validation, documentation and the runner use these names.
const (
	// DefaultRequests is the number of measured requests when Workload.Requests is 0.
	DefaultRequests = 60
	// MaxRequests is the largest Workload.Requests.
	MaxRequests = 10000
	// DefaultConcurrency is the number of requests in flight when Workload.Concurrency is 0.
	DefaultConcurrency = 20
	// MaxConcurrency is the largest Workload.Concurrency. The reference tool
	// stops at ReferenceMaxConcurrency; a run above it is still a v1
	// artifact. Run checks the open-file limit first (one connection per
	// request in flight, and as many again being torn down).
	MaxConcurrency = 16384
	// ReferenceMaxConcurrency is the reference tool's largest concurrency.
	ReferenceMaxConcurrency = 256
	// MaxBurst is the largest Workload.Burst: a burst sends all its
	// requests at once, so it is bounded by MaxRequests too.
	MaxBurst = min(MaxConcurrency, MaxRequests)
	// DefaultSharedPrefixTokens is the estimated token length of the shared
	// prefix when Workload.SharedPrefixTokens is 0.
	DefaultSharedPrefixTokens = 8000
	// MaxSharedPrefixTokens is the largest Workload.SharedPrefixTokens.
	MaxSharedPrefixTokens = 262144
	// MinContextTokens is the smallest fixed Workload.ContextTokens.
	MinContextTokens = 32
	// MaxContextTokens is the largest fixed Workload.ContextTokens and the
	// largest Target.MaxModelLen.
	MaxContextTokens = 1048576
	// DefaultMaxTokens is the completion limit sent when Workload.MaxTokens
	// is 0: room for a reasoning model to think before its answer (the
	// embedded fake's default profile thinks for a few hundred tokens).
	// It is not the reference tool's default; set MaxTokens to
	// ReferenceMaxTokens for the reference's request bytes.
	DefaultMaxTokens = 1024
	// ReferenceMaxTokens is the reference tool's default max_tokens: a
	// Workload with MaxTokens = ReferenceMaxTokens and the other fields
	// zero sends the reference's requests byte for byte. A reasoning
	// model may spend all of it thinking, and the request then fails
	// without visible content.
	ReferenceMaxTokens = 64
	// MaxMaxTokens is the largest Workload.MaxTokens.
	MaxMaxTokens = 65536
	// MinCanaryMaxTokens is the smallest Workload.MaxTokens that leaves room
	// for a request canary marker in the answer.
	MinCanaryMaxTokens = 16
	// MaxResponseWords is the largest Workload.ResponseWords.
	MaxResponseWords = 65536
	// DefaultTimeout is the per-request limit when Workload.Timeout is 0.
	DefaultTimeout = 900 * time.Second
	// MaxTimeout is the largest Workload.Timeout.
	MaxTimeout = 3600 * time.Second
	// MaxDuration is the longest Workload.Duration campaign.
	MaxDuration = 24 * time.Hour
	// MaxPlannedPromptTokens caps the sum of the planned contexts of a run
	// (requests x context for a fixed context).
	MaxPlannedPromptTokens = 67108864
)

// None, as a field where 0 means the default, asks for none:
// Workload.SharedPrefixTokens = None sends no shared prefix, Target.Margin =
// None keeps no margin below the context window. Resolved keeps None as it
// is (it means the same when resolved again).
const None = -1

// PromptCacheMode says whether the prompts of a run share a prefix the
// server may cache.
type PromptCacheMode string

const (
	// PromptCacheShared gives every request the same prefix (the default).
	PromptCacheShared PromptCacheMode = "shared"
	// PromptCacheUnique gives every request its own prefix, which defeats
	// prefix caching.
	PromptCacheUnique PromptCacheMode = "unique"
)

// ControlledOutputPolicy says what a response that does not follow the
// response-words instruction exactly becomes.
type ControlledOutputPolicy string

const (
	// PolicyObserve records adherence without failing the request (the default).
	PolicyObserve ControlledOutputPolicy = "observe"
	// PolicyStrict fails every response that is not exactly the requested
	// words, including responses whose capture was truncated.
	PolicyStrict ControlledOutputPolicy = "strict"
)

// ThinkingMode is the chat-template thinking switch sent to the server.
type ThinkingMode string

const (
	// ThinkingDefault sends no thinking control (the default).
	ThinkingDefault ThinkingMode = "default"
	// ThinkingEnabled sends chat_template_kwargs {"enable_thinking": true}.
	ThinkingEnabled ThinkingMode = "enabled"
	// ThinkingDisabled sends chat_template_kwargs {"enable_thinking": false}.
	ThinkingDisabled ThinkingMode = "disabled"
	// ThinkingUnsupported records that the model has no thinking switch;
	// nothing is sent.
	ThinkingUnsupported ThinkingMode = "unsupported"
)

// ReasoningEffort is the top-level reasoning_effort request field. The empty
// value sends nothing (recorded as null).
type ReasoningEffort string

// The reasoning efforts the artifact may record.
const (
	ReasoningNone    ReasoningEffort = "none"
	ReasoningMinimal ReasoningEffort = "minimal"
	ReasoningLow     ReasoningEffort = "low"
	ReasoningMedium  ReasoningEffort = "medium"
	ReasoningHigh    ReasoningEffort = "high"
	ReasoningXHigh   ReasoningEffort = "xhigh"
	ReasoningMax     ReasoningEffort = "max"
)

// Progress is a snapshot of a running campaign passed to Workload.Progress.
type Progress struct {
	// Planned is the number of measured requests the run may dispatch.
	Planned int
	// Dispatched counts measured requests sent so far.
	Dispatched int
	// Succeeded counts measured requests that produced a valid timing row.
	Succeeded int
	// Failed counts measured requests that ended in a failure row.
	Failed int
	// InFlight counts requests (warm-up included) currently outstanding.
	InFlight int
	// Warmup is true while the warm-up requests are running.
	Warmup bool
	// Elapsed is the monotonic time since the current phase started: the
	// warm-up while Warmup is true, then the measured requests (the time
	// Workload.Duration is compared with).
	Elapsed time.Duration
}

// Workload describes what a capacity run sends. The zero value is the
// reference tool's default workload; Resolved fills in every default and
// validates every bound, and a resolved Workload holds effective values only.
type Workload struct {
	// Requests is the number of measured requests, 1..MaxRequests
	// (0: DefaultRequests; with Burst, Burst; with Duration, the largest
	// count within MaxRequests and MaxPlannedPromptTokens).
	Requests int
	// Concurrency is the number of requests kept in flight, 1..MaxConcurrency
	// (0: DefaultConcurrency; with Burst, Burst). In an open loop (Rate > 0)
	// it is the cap on requests in flight: requests leave at their
	// scheduled times, and one due while Concurrency are outstanding waits.
	Concurrency int
	// Burst, when > 0, sends Burst requests at once: Requests = Concurrency =
	// Burst, the shared prefix is used (serve_flags.shared_prefix_burst).
	// 0..MaxBurst; 0 means no burst.
	Burst int
	// ContextTokens is the planned prompt size of every request, 0 or
	// MinContextTokens..MaxContextTokens. 0 samples one context per request
	// from the seeded bucket distribution (see SampleContexts).
	ContextTokens int
	// Seed seeds the sampled contexts and names the canary markers (default 0,
	// as in the reference).
	Seed int64
	// MaxTokens is the max_tokens sent, 1..MaxMaxTokens (0: DefaultMaxTokens).
	MaxTokens int
	// SharedPrefixTokens is the estimated token length of the shared prefix,
	// 0..MaxSharedPrefixTokens (0: DefaultSharedPrefixTokens; None for
	// none). In unique mode it sizes the request-specific prefix.
	SharedPrefixTokens int
	// PromptCacheMode is shared or unique (empty: PromptCacheShared).
	PromptCacheMode PromptCacheMode
	// OmitUniqueNonce leaves the per-run nonce out of unique-mode prefixes,
	// so runs with the same seed send the same prompts (and may hit a prefix
	// cache warmed by an earlier run). Only meaningful in unique mode.
	OmitUniqueNonce bool
	// RequestCanaries asks every response to begin with its own marker
	// ANVIL_REQ_{seed}_{index:05d} and checks it; needs MaxTokens >=
	// MinCanaryMaxTokens.
	RequestCanaries bool
	// ResponseWords, when > 0, asks for exactly that many words "code" and
	// records adherence, 0..MaxResponseWords.
	ResponseWords int
	// ControlledOutputPolicy is observe or strict (empty: PolicyObserve);
	// strict needs ResponseWords > 0.
	ControlledOutputPolicy ControlledOutputPolicy
	// Temperature, when non-nil, is sent as temperature (finite, >= 0);
	// nil sends DefaultTemperature (0.0), as the reference tool does.
	Temperature *float64
	// TopP, when non-nil, is sent as top_p (in (0, 1]).
	TopP *float64
	// ThinkingMode is the chat-template thinking switch (empty: ThinkingDefault).
	ThinkingMode ThinkingMode
	// ReasoningEffort, when set, is sent as reasoning_effort; it may not be
	// combined with an explicit ThinkingMode (only with ThinkingDefault).
	ReasoningEffort ReasoningEffort
	// Timeout bounds each request from t0 to the end of its stream,
	// (0, MaxTimeout] (0: DefaultTimeout).
	Timeout time.Duration
	// StallTimeout bounds how long a request may receive nothing at all:
	// from t0 to the response headers, then between two reads of the
	// response body that return bytes. Any bytes count as activity, not
	// only complete events: SSE comments such as ": keep-alive" and partial
	// events reset it too, so a server that sends keep-alives through a
	// long prefill is not stalled. A request that exceeds it fails with
	// "timeout". (0, Timeout] (0: Timeout, i.e. no separate limit).
	StallTimeout time.Duration
	// Warmup is the number of requests sent before the measured ones and left
	// out of the report, 0..MaxRequests.
	Warmup int
	// MaxFailures stops dispatching after that many failed measured requests,
	// 0..MaxRequests (0: never stop early).
	MaxFailures int
	// Duration, when > 0, is the campaign length: no measured request is
	// dispatched after Duration has elapsed and in-flight requests finish.
	// Requests is then an upper bound on dispatch, and with sampled contexts
	// the plan stops at the longest prefix of requests whose planned contexts
	// fit MaxPlannedPromptTokens. 0..MaxDuration.
	Duration time.Duration
	// Progress, when non-nil, is called by the runner as the run advances,
	// from one goroutine at a time; it must return quickly.
	Progress func(Progress)
	// StallThreshold, when > 0, is the gap between two output chunks above
	// which the gap is a stall, for every stream (anvil_go.chunk_timing).
	// 0 applies the relative rule: max(itl.DefaultStallRelative x the
	// stream's median gap, itl.DefaultStallFloor). 0 or in (0, Timeout].
	StallThreshold time.Duration
	// PromptSizing says how prompts are sized to their planned contexts
	// (empty: PromptSizingReference). See PromptSizing.
	PromptSizing PromptSizing
	// Rate, when > 0, makes the run an open loop (capacity/PROTOCOL.md#overview):
	// the measured requests are due at the offsets of an arrival schedule
	// of Rate requests per second (Arrival, Burstiness, seeded by Seed),
	// computed before the run, and each leaves at its due time whatever the
	// completions of the others. Concurrency is then the cap on requests in
	// flight, not their number: a request due while Concurrency requests
	// are outstanding waits for one to finish, and that wait is its queue
	// time (anvil_go.requests[].queue_ms), charged to its scheduled-clock
	// latencies. With Duration, the schedule holds the requests due before
	// Duration (at most Requests), all of which are sent. Warm-up requests
	// run as a closed loop before the schedule starts. 0 (the closed loop)
	// or MinRate..MaxRate.
	Rate float64
	// Arrival is the arrival process of an open loop (empty: ArrivalPoisson,
	// or ArrivalGamma when Burstiness is set). Only with Rate > 0.
	Arrival ArrivalProcess
	// Burstiness is the gamma shape of ArrivalGamma, MinBurstiness..MaxBurstiness
	// (0: DefaultBurstiness): below 1 burstier than Poisson, above 1
	// smoother. Only with ArrivalGamma.
	Burstiness float64
	// KeepGoing sends every planned request even when the first ones all
	// fail for a reason that will not change, which otherwise stops the
	// run early (capacity/PROTOCOL.md#early-stop). MaxFailures still
	// applies.
	KeepGoing bool

	// Source, when non-nil, says what each of the Requests measured
	// requests is, instead of the synthetic plan of ContextTokens,
	// SharedPrefixTokens and the other prompt fields (a trace, sessions);
	// see Source. Warm-up requests still follow those fields. Not with
	// PromptSizingExact.
	Source Source
	// Schedule, when non-nil, says when each measured request is due,
	// instead of the closed loop or Rate's arrival schedule; Concurrency
	// stays the cap on requests in flight, and with Duration no request
	// leaves after Duration. Not with Rate.
	Schedule Schedule
	// Observers are told when the measured phase starts and ends, and may
	// extend the report (see Observer); a Gate among them admits each
	// measured request.
	Observers []Observer
	// Shard, when its Count is > 0, makes the run one shard of the
	// workload, starting at a common instant (see Shard).
	Shard Shard
}

// Resolved returns w with every default filled in, or an error wrapping
// ErrInvalidConfig (each problem a *FieldError naming the field, the value
// and the allowed range). A zero field becomes its default and None stays
// None, so resolving the result again validates it and changes nothing.
func (w Workload) Resolved() (Workload, error) {
	w = w.withDefaults()
	if err := w.validate(); err != nil {
		return Workload{}, err
	}
	return w, nil
}

// sharedPrefixTokens is the shared prefix length of a resolved Workload in
// tokens: 0 for None.
func (w Workload) sharedPrefixTokens() int {
	if w.SharedPrefixTokens == None {
		return 0
	}
	return w.SharedPrefixTokens
}

// withDefaults replaces zero values by the reference defaults, in the order
// in which they depend on each other.
func (w Workload) withDefaults() Workload {
	if w.Burst > 0 {
		if w.Requests == 0 {
			w.Requests = w.Burst
		}
		if w.Concurrency == 0 {
			w.Concurrency = w.Burst
		}
	}
	if w.Requests == 0 {
		if w.Duration > 0 {
			// An upper bound on dispatch: as many as the bounds allow.
			w.Requests = MaxRequests
			if w.ContextTokens > 0 {
				w.Requests = min(MaxRequests, MaxPlannedPromptTokens/w.ContextTokens)
			}
		} else {
			w.Requests = DefaultRequests
		}
	}
	if w.Concurrency == 0 {
		w.Concurrency = DefaultConcurrency
	}
	if w.MaxTokens == 0 {
		w.MaxTokens = DefaultMaxTokens
	}
	if w.SharedPrefixTokens == 0 {
		w.SharedPrefixTokens = DefaultSharedPrefixTokens
	}
	if w.PromptCacheMode == "" {
		w.PromptCacheMode = PromptCacheShared
	}
	if w.ControlledOutputPolicy == "" {
		w.ControlledOutputPolicy = PolicyObserve
	}
	if w.ThinkingMode == "" {
		w.ThinkingMode = ThinkingDefault
	}
	if w.Timeout == 0 {
		w.Timeout = DefaultTimeout
	}
	if w.StallTimeout == 0 {
		w.StallTimeout = w.Timeout
	}
	if w.PromptSizing == "" {
		w.PromptSizing = PromptSizingReference
	}
	return w.withArrivalDefaults()
}

package capacity

import (
	"time"

	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/discovery"
)

// Reference defaults and bounds of a Workload (capacity/PROTOCOL.md#bounds,
// which states their values for users). Each is defined once here;
// validation and the runner use these names.
const (
	// defaultRequests is the number of measured requests when Workload.Requests is 0.
	defaultRequests = 60
	// maxRequests is the largest Workload.Requests: maxConcurrency, so
	// that a run can hold as many streams open at once as it may keep in
	// flight, each its own request.
	maxRequests = maxConcurrency
	// maxWarmupFor is the largest Workload.WarmupFor.
	maxWarmupFor = time.Hour
	// defaultSteadyWarmup is the longest a WarmupSteady warm-up takes when
	// WarmupFor is 0.
	defaultSteadyWarmup = 5 * time.Minute
	// defaultConcurrency is the number of requests in flight when Workload.Concurrency is 0.
	defaultConcurrency = 20
	// maxConcurrency is the largest Workload.Concurrency. The reference tool
	// stops at 256; a run above it is still a v1 artifact. Run checks the
	// open-file limit first (one connection per request in flight, and as
	// many again being torn down).
	maxConcurrency = 16384
	// maxBurst is the largest Workload.Burst: a burst sends all its
	// requests at once, so it is bounded by maxRequests too.
	maxBurst = min(maxConcurrency, maxRequests)
	// defaultSharedPrefixTokens is the estimated token length of the shared
	// prefix when Workload.SharedPrefixTokens is 0.
	defaultSharedPrefixTokens = 8000
	// maxSharedPrefixTokens is the largest Workload.SharedPrefixTokens.
	maxSharedPrefixTokens = 262144
	// minContextTokens is the smallest fixed Workload.ContextTokens.
	minContextTokens = 32
	// maxContextTokens is the largest fixed Workload.ContextTokens and the
	// largest Target.MaxModelLen.
	maxContextTokens = discovery.MaxWindow
	// defaultMaxTokens is the completion limit sent when Workload.MaxTokens
	// is 0: room for a reasoning model to think before its answer (the
	// embedded fake's default profile thinks for a few hundred tokens).
	// It is not the reference tool's default; set MaxTokens to
	// referenceMaxTokens for the reference's request bytes.
	defaultMaxTokens = 1024
	// referenceMaxTokens is the reference tool's default max_tokens: a
	// Workload with MaxTokens = referenceMaxTokens and the other fields
	// zero sends the reference's requests byte for byte. A reasoning
	// model may spend all of it thinking, and the request then fails
	// without visible content.
	referenceMaxTokens = 64
	// maxMaxTokens is the largest Workload.MaxTokens, the client's bound
	// of a stream's events.
	maxMaxTokens = client.MaxMaxTokens
	// minCanaryMaxTokens is the smallest Workload.MaxTokens that leaves room
	// for a request canary marker in the answer.
	minCanaryMaxTokens = 16
	// maxResponseWords is the largest Workload.ResponseWords.
	maxResponseWords = 65536
	// defaultTimeout is the per-request limit when Workload.Timeout is 0.
	defaultTimeout = 900 * time.Second
	// maxTimeout is the largest Workload.Timeout.
	maxTimeout = 3600 * time.Second
	// maxDuration is the longest Workload.Duration campaign.
	maxDuration = 24 * time.Hour
	// maxPlannedPromptTokens caps the sum of the planned contexts of a run
	// (requests x context for a fixed context).
	maxPlannedPromptTokens = 67108864
)

// None, as a field where 0 means the default, asks for none:
// Workload.SharedPrefixTokens = None sends no shared prefix, Target.Margin =
// None keeps no margin below the context window. Resolved keeps None as it
// is (it means the same when resolved again).
const None = -1

// PromptCacheMode says whether the prompts of a run share a prefix the
// server may cache: "shared" (the default) gives every request the same
// prefix, "unique" gives every request its own, which defeats prefix
// caching.
type PromptCacheMode string

const (
	// promptCacheShared gives every request the same prefix (the default).
	promptCacheShared PromptCacheMode = "shared"
	// promptCacheUnique gives every request its own prefix, which defeats
	// prefix caching.
	promptCacheUnique PromptCacheMode = "unique"
)

// ControlledOutputPolicy says what a response that does not follow the
// response-words instruction exactly becomes: "observe" (the default)
// records adherence without failing the request, "strict" fails every
// response that is not exactly the requested words, including responses
// whose capture was truncated.
type ControlledOutputPolicy string

const (
	// policyObserve records adherence without failing the request (the default).
	policyObserve ControlledOutputPolicy = client.PolicyObserve
	// policyStrict fails every response that is not exactly the requested
	// words, including responses whose capture was truncated.
	policyStrict ControlledOutputPolicy = client.PolicyStrict
)

// ThinkingMode is the chat-template thinking switch sent to the server:
// "default" sends no thinking control (the default), "enabled" and
// "disabled" send chat_template_kwargs {"enable_thinking": true} or
// false, and "unsupported" records that the model has no thinking switch
// (nothing is sent).
type ThinkingMode string

const (
	// thinkingDefault sends no thinking control (the default).
	thinkingDefault ThinkingMode = "default"
	// thinkingEnabled sends chat_template_kwargs {"enable_thinking": true}.
	thinkingEnabled ThinkingMode = "enabled"
	// thinkingDisabled sends chat_template_kwargs {"enable_thinking": false}.
	thinkingDisabled ThinkingMode = "disabled"
	// thinkingUnsupported records that the model has no thinking switch;
	// nothing is sent.
	thinkingUnsupported ThinkingMode = "unsupported"
)

// ReasoningEffort is the top-level reasoning_effort request field: "none",
// "minimal", "low", "medium", "high", "xhigh" or "max". The empty value
// sends nothing (recorded as null).
type ReasoningEffort string

// The reasoning efforts the artifact may record.
const (
	reasoningNone    ReasoningEffort = "none"
	reasoningMinimal ReasoningEffort = "minimal"
	reasoningLow     ReasoningEffort = "low"
	reasoningMedium  ReasoningEffort = "medium"
	reasoningHigh    ReasoningEffort = "high"
	reasoningXHigh   ReasoningEffort = "xhigh"
	reasoningMax     ReasoningEffort = "max"
)

// Progress is a snapshot of a running campaign passed to Workload.Progress.
type Progress struct {
	// Phase is what the run is doing: "discovery" (the model probe, the
	// context window, the server's slots and metrics endpoint),
	// "calibration" (exact prompt sizing), "warm-up" (Workload.Warmup's
	// requests), "connections" (the connection warm-up), "start" (a shard
	// waiting for Shard.StartAt) or "measured". Only the warm-up and the
	// measured phase have requests to count; the other snapshots carry
	// the phase and its Elapsed alone.
	Phase string
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
	// Warmup is true while the warm-up requests are running (Phase
	// "warm-up").
	Warmup bool
	// Oldest is how long the oldest request in flight has been out, 0
	// when none is: a request that hangs shows here.
	Oldest time.Duration
	// Elapsed is the monotonic time since the current phase started (in
	// the measured phase, the time Workload.Duration is compared with).
	Elapsed time.Duration
}

// Workload describes what a capacity run sends. The zero value is the
// reference tool's default workload; Resolved fills in every default and
// validates every bound, and a resolved Workload holds effective values only.
type Workload struct {
	// Requests is the number of measured requests, 1..16384 (0: 60; with
	// Burst, Burst; with Duration, the largest count within 16384 and
	// 67108864 planned prompt tokens).
	Requests int
	// Concurrency is the number of requests kept in flight, 1..16384
	// (0: 20; with Burst, Burst; the reference tool stops at 256). In an open loop (Rate > 0)
	// it is the cap on requests in flight: requests leave at their
	// scheduled times, and one due while Concurrency are outstanding waits.
	Concurrency int
	// Burst, when > 0, sends Burst requests at once: Requests = Concurrency =
	// Burst, the shared prefix is used (serve_flags.shared_prefix_burst).
	// 0..16384; 0 means no burst.
	Burst int
	// ContextTokens is the planned prompt size of every request, 0 or
	// 32..1048576. 0 samples one context per request from the seeded
	// bucket distribution of the reference tool
	// (capacity/PROTOCOL.md#context-sampling).
	ContextTokens int
	// Seed seeds the sampled contexts and names the canary markers (default 0,
	// as in the reference).
	Seed int64
	// MaxTokens is the max_tokens sent, 1..65536 (0: 1024, room for a
	// reasoning model to think before its answer). The reference tool
	// sends 64: a Workload with MaxTokens 64 and the other fields zero
	// sends the reference's requests byte for byte.
	MaxTokens int
	// SharedPrefixTokens is the estimated token length of the shared prefix,
	// 0..262144 (0: 8000; None for none). In unique mode it sizes the request-specific prefix.
	SharedPrefixTokens int
	// PromptCacheMode is "shared" or "unique" (empty: "shared").
	PromptCacheMode PromptCacheMode
	// OmitUniqueNonce leaves the per-run nonce out of unique-mode prefixes,
	// so runs with the same seed send the same prompts (and may hit a prefix
	// cache warmed by an earlier run). Only meaningful in unique mode.
	OmitUniqueNonce bool
	// RequestCanaries asks every response to begin with its own marker
	// ANVIL_REQ_{seed}_{index:05d} and checks it; needs MaxTokens >= 16.
	RequestCanaries bool
	// ResponseWords, when > 0, asks for exactly that many words "code" and
	// records adherence, 0..65536.
	ResponseWords int
	// ControlledOutputPolicy is "observe" or "strict" (empty: "observe");
	// strict needs ResponseWords > 0.
	ControlledOutputPolicy ControlledOutputPolicy
	// Temperature, when non-nil, is sent as temperature (finite, >= 0);
	// nil sends 0.0, as the reference tool does.
	Temperature *float64
	// TopP, when non-nil, is sent as top_p (in (0, 1]).
	TopP *float64
	// ThinkingMode is the chat-template thinking switch (empty: "default").
	ThinkingMode ThinkingMode
	// ReasoningEffort, when set, is sent as reasoning_effort; it may not be
	// combined with an explicit ThinkingMode (only with "default").
	ReasoningEffort ReasoningEffort
	// EncodingFormat is the encoding_format of an embeddings request
	// (Target.API "embeddings"): "float" (the default, empty) or "base64".
	EncodingFormat string
	// Timeout bounds each request from t0 to the end of its stream,
	// (0, 1h] (0: 15m).
	Timeout time.Duration
	// StallTimeout bounds how long a request may receive nothing at all:
	// from t0 to the response headers, then between two reads of the
	// response body that return bytes. Any bytes count as activity, not
	// only complete events: SSE comments such as ": keep-alive" and partial
	// events reset it too, so a server that sends keep-alives through a
	// long prefill is not stalled. A request that exceeds it fails with
	// "timeout". (0, Timeout] (0: Timeout, i.e. no separate limit).
	StallTimeout time.Duration
	// ProbeRate, when > 0, sends probe requests beside the measured phase:
	// short requests (a few tokens, max_tokens 1) at Poisson arrivals of
	// that rate, in probes per second, 0.001..10, on connections of their
	// own and outside Concurrency, left out of the run's rows, metrics and
	// counts and reported on their own in anvil_go.probe_requests: the
	// latency a new user sees while the server is busy
	// (capacity/PROTOCOL.md#probe_requests).
	ProbeRate float64
	// Warmup is the number of requests sent before the measured ones and left
	// out of the report, 0..16384.
	Warmup int
	// WarmupFor, when > 0, warms up by time instead: warm-up requests are
	// sent with Concurrency in flight until WarmupFor has elapsed (those
	// in flight then finish), at most 16384 of them. With WarmupSteady it
	// is the longest the warm-up may take instead. 0..1h; Warmup must be
	// 0 with it.
	WarmupFor time.Duration
	// WarmupSteady warms up until steady: warm-up requests are sent until
	// their own requests, tested as a measured phase is
	// (capacity/PROTOCOL.md#steady), have a steady window that reaches
	// their last two bins and holds at least half of them (checked once a
	// second), or for WarmupFor (0: 5 minutes) if they never do;
	// anvil_go.run.warmup_steady says which.
	// Warmup must be 0 with it.
	WarmupSteady bool
	// MaxFailures stops dispatching after that many failed measured requests,
	// 0..16384 (0: never stop early).
	MaxFailures int
	// Duration, when > 0, is the campaign length: no measured request is
	// dispatched after Duration has elapsed and in-flight requests finish.
	// Requests is then an upper bound on dispatch, and with sampled contexts
	// the plan stops at the longest prefix of requests whose planned contexts
	// fit 67108864 tokens. 0..24h.
	Duration time.Duration
	// Progress, when non-nil, is called by the runner as the run advances
	// (each phase, each dispatch and completion) and at least once a second
	// from the model probe to the end of the measured phase, with its
	// clocks advanced, so that a wait shows; from one goroutine at a time,
	// never two calls at once. It must return quickly.
	Progress func(Progress)
	// StallThreshold, when > 0, is the gap between two output chunks above
	// which the gap is a stall, for every stream (anvil_go.chunk_timing).
	// 0 applies the relative rule: max(itl.DefaultStallRelative x the
	// stream's median gap, itl.DefaultStallFloor). 0 or in (0, Timeout].
	StallThreshold time.Duration
	// PromptSizing says how prompts are sized to their planned contexts
	// (empty: "reference"). See PromptSizing.
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
	// or 0.001..1e6 requests per second.
	Rate float64
	// Arrival is the arrival process of an open loop (empty: "poisson", or
	// "gamma" when Burstiness is set). Only with Rate > 0. See
	// ArrivalProcess.
	Arrival ArrivalProcess
	// Burstiness is the gamma shape of the "gamma" process, 0.01..100
	// (0: 1): below 1 burstier than Poisson, above 1 smoother. Only with
	// "gamma".
	Burstiness float64
	// KeepGoing sends every planned request even when the first ones all
	// fail for a reason that will not change, which otherwise stops the
	// run early (capacity/PROTOCOL.md#early-stop). MaxFailures still
	// applies.
	KeepGoing bool

	// Source, when non-nil, says what each of the Requests measured
	// requests is, instead of the synthetic plan of ContextTokens,
	// SharedPrefixTokens and the other prompt fields (a trace, sessions);
	// see Source. Warm-up requests still follow those fields. With
	// PromptSizing "exact", only a SizedSource.
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
			w.Requests = maxRequests
			if w.ContextTokens > 0 {
				w.Requests = min(maxRequests, maxPlannedPromptTokens/w.ContextTokens)
			}
		} else {
			w.Requests = defaultRequests
		}
	}
	if w.Concurrency == 0 {
		w.Concurrency = defaultConcurrency
	}
	if w.MaxTokens == 0 {
		w.MaxTokens = defaultMaxTokens
	}
	if w.SharedPrefixTokens == 0 {
		w.SharedPrefixTokens = defaultSharedPrefixTokens
	}
	if w.PromptCacheMode == "" {
		w.PromptCacheMode = promptCacheShared
	}
	if w.ControlledOutputPolicy == "" {
		w.ControlledOutputPolicy = policyObserve
	}
	if w.ThinkingMode == "" {
		w.ThinkingMode = thinkingDefault
	}
	if w.Timeout == 0 {
		w.Timeout = defaultTimeout
	}
	if w.StallTimeout == 0 {
		w.StallTimeout = w.Timeout
	}
	if w.PromptSizing == "" {
		w.PromptSizing = promptSizingReference
	}
	return w.withArrivalDefaults()
}

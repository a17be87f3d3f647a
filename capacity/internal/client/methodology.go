package client

import (
	"fmt"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/stats"
)

// The fixed sentences of the artifact: how this implementation measures each
// metric ("timing_methodology"), the precision of its timestamps
// ("timestamp_precision"). They describe this Go implementation, in its own
// words: what Send stamps and Evaluate derives, and the statistics the
// report computes from its rows. (The failure_policy sentence is
// artifact's, beside Recompute.)

// TimestampPrecision is the artifact's "timestamp_precision" sentence.
const TimestampPrecision = "started_at_unix_ns and finished_at_unix_ns are integer nanoseconds since the Unix epoch from the wall clock; started_at and finished_at are UTC labels truncated to the second"

// The keys of "timing_methodology" (capacity/PROTOCOL.md#artifact-keys).
const (
	methodologyArtifactTimestamps    = "artifact_timestamps"
	methodologyClock                 = "clock"
	methodologyControlledOutput      = "controlled_output"
	methodologyDecode                = "decode"
	methodologyDistributions         = "distributions"
	methodologyEffectivePrefill      = "effective_prefill"
	methodologyGeneration            = "generation"
	methodologyMeanInterTokenLatency = "mean_inter_token_latency"
	methodologyP99                   = "p99"
	methodologyRequestCanaries       = "request_canaries"
	methodologyTimeToFirstOutput     = "time_to_first_output"
	methodologyTPOT                  = "tpot"
	methodologyTTFT                  = "ttft"
)

// TimingMethodology returns a new "timing_methodology" map: one sentence
// per metric saying how this implementation measures it. The protocol
// constants the sentences quote (VisibleCaptureLimit, stats.Z95,
// artifact.P99MinimumSamples, MinPromptTokenFraction, CanaryMarkerPrefix,
// ControlledOutputWord) are written from their definitions.
func TimingMethodology() map[string]string {
	return map[string]string{
		methodologyArtifactTimestamps:    "Unix nanosecond timestamps read from Go's wall clock (time.Now().UnixNano()); two artifacts may be aligned on them only when both name the same explicit clock_domain_id",
		methodologyClock:                 "every duration is the difference of two readings of Go's monotonic clock (time.Now and time.Since use its monotonic reading, immune to wall-clock steps); t0 is read immediately before the request is issued, connection setup included, and each stream event is stamped with the arrival of its last byte, before it is decoded: on Linux, over the run's own connections, the kernel's receive time of the packet that brought it (SO_TIMESTAMPNS, moved onto the monotonic clock by the wall clock's lag at the read), else the end of the read that returned it",
		methodologyControlledOutput:      fmt.Sprintf("with response_words N the visible answer, captured up to %d characters, is split at white space and counted as lowercase words %[2]s and other words; observe records adherence, strict fails any answer that is not exactly N words %[2]s or whose capture was truncated", VisibleCaptureLimit, ControlledOutputWord),
		methodologyDecode:                "usage.completion_tokens minus one, divided by the generation time in seconds; only when the server reported usage, and completion tokens may include reasoning tokens",
		methodologyDistributions:         fmt.Sprintf("over the successful requests: mean, sample standard deviation (n-1), a normal-approximation 95%% confidence interval of the mean (mean -/+ %v stddev / sqrt(n)), min, nearest-rank p25, p50, p75, p90, p95, p99 and max", stats.Z95),
		methodologyEffectivePrefill:      fmt.Sprintf("usage.prompt_tokens divided by the time to first output in seconds; it includes queueing, scheduling, cached prompt tokens and first-token work, hence effective; a response whose usage.prompt_tokens is at or below %v of its planned context, at or above the truncation window, or whose prompt and completion tokens exceed it fails as a truncated prompt and is not measured; the truncation window is the one the server advertises, else the declared one, as anvil_go.context_window.truncation_window and its source record", MinPromptTokenFraction),
		methodologyGeneration:            "end-to-end time minus time to first output, both from the monotonic clock",
		methodologyMeanInterTokenLatency: "legacy name of tpot: generation time divided by the completion tokens after the first; a mean per output token, not a measurement of each gap between tokens",
		methodologyP99:                   fmt.Sprintf("the nearest-rank p99 is always reported; below %d successful samples it is descriptive only and not a tail estimate", artifact.P99MinimumSamples),
		methodologyRequestCanaries:       fmt.Sprintf("when enabled, each prompt asks the answer to begin with the request's own %[1]s marker; the answer, captured up to %[2]d characters, must begin with it and hold no other %[1]s text, and a truncated capture fails closed; failing requests are excluded from the performance metrics", CanaryMarkerPrefix, VisibleCaptureLimit),
		methodologyTimeToFirstOutput:     "from t0 to the arrival of the first stream event carrying a non-empty reasoning or content delta",
		methodologyTPOT:                  "generation time divided by the completion tokens after the first (usage.completion_tokens - 1); null without usage or when either is not positive",
		methodologyTTFT:                  "from t0 to the arrival of the first stream event carrying a non-empty visible content delta",
	}
}

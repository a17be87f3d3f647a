package artifact

import (
	"fmt"
	"math"
)

// This file holds the anvil_go members written by the run's observers: the
// server's own metrics sampled during the measured phase
// (package capacity/servermetrics) and the client's self-audit (package
// capacity/internal/audit). Both are documented key by key in
// capacity/PROTOCOL.md#anvil-go.

// The verdicts of TokenCheck (set by TokenCheck.Judge).
const (
	// tokensExact: the server's counter rose by exactly the completion
	// tokens the run's responses reported.
	tokensExact = "exact"
	// tokensAgree: the difference is within what the window edges and the
	// requests without usage explain (TokenCheck.Allowance).
	tokensAgree = "agree"
	// tokensMismatch: the difference is larger, or the counter was reset;
	// TokenCheck.Reason names it.
	tokensMismatch = "mismatch"
)

// The verdicts of Audit (set by Audit.SetVerdict).
const (
	// auditOK: no rule of the audit fired; the client's timings can be
	// trusted to its clock's resolution.
	auditOK = "ok"
	// auditSuspect: at least one rule fired; Audit.Reasons says which.
	auditSuspect = "suspect"
)

// ServerMetrics is "anvil_go.server_metrics": the server's Prometheus
// endpoint, sampled on its own connection during the measured phase.
type ServerMetrics struct {
	// Endpoint is "endpoint": the URL sampled, without userinfo or query,
	// scrubbed of the run's credentials.
	Endpoint string
	// Engine is "engine": vllm, sglang, llamacpp or tgi, the engine whose
	// metric names the endpoint has; nil when none is recognised.
	Engine     *string
	IntervalMS float64 // "interval_ms": the time between samples
	TimeoutMS  float64 // "timeout_ms": the limit on one sample's GET
	Samples    int     // "samples": samples that answered and parsed
	Failed     int     // "failed": samples that failed (counted, never failing the run)
	// LastError is "last_error": the last failure, scrubbed; nil when none.
	LastError *string
	// MaxPointsPerSeries is "max_points_per_series": the bound on one
	// series' points (240, capacity/PROTOCOL.md#server_metrics).
	MaxPointsPerSeries int
	// DroppedSeries is "dropped_series": series not kept because the
	// member already held its maximum number of series, or their labels
	// exceed the bounds.
	DroppedSeries int
	// SkippedValues is "skipped_values": NaN or infinite sample values,
	// which JSON cannot hold, left out.
	SkippedValues int
	// Series is "series": the kept series, sorted by name then labels.
	Series []MetricSeries
	// Checks is "checks": the cross-checks with the run's own
	// measurements; nil when not computed.
	Checks *ServerChecks
	// SpecDecode is "spec_decode": the engine's speculative decoding over
	// the measured phase (gpu.go); nil when the endpoint has no
	// speculation metrics.
	SpecDecode *SpecDecode

	shape shape
}

// MetricSeries is one object of "anvil_go.server_metrics.series": one
// sample name with one label set over the measured phase. A histogram
// family gives two series, its "_sum" and its "_count".
type MetricSeries struct {
	Name   string            // "name": the sample name as exposed
	Type   string            // "type": gauge or counter
	Labels map[string]string // "labels": the sample's labels
	// SamplesPerPoint is "samples_per_point": how many consecutive samples
	// each point stands for: 1, doubled each time the series was
	// downsampled to stay within max_points_per_series.
	SamplesPerPoint int
	// OffsetsMS is "offsets_ms": each point's offset on the run's clock;
	// Values is "values", the same length: each point's value, the maximum
	// of the samples it stands for (taken at that offset).
	OffsetsMS []float64
	Values    []float64
	// Increase is "increase": for a counter, its rise over the measured
	// phase, first sample to last, a reset counted from zero; nil for a
	// gauge.
	Increase *float64
	// Resets is "resets": for a counter, the times its value fell (the
	// server restarted it); nil for a gauge.
	Resets *int

	shape shape
}

// ServerChecks is "anvil_go.server_metrics.checks".
type ServerChecks struct {
	// GenerationTokens is "generation_tokens": the server's generation
	// token counter against the run's usage; nil when the endpoint has no
	// such counter.
	GenerationTokens *TokenCheck
	// TTFT is "ttft": the server's own mean time to first token against
	// the client's; nil when the endpoint has no TTFT histogram or either
	// side has no request.
	TTFT *TTFTCheck

	shape shape
}

// TokenCheck is "anvil_go.server_metrics.checks.generation_tokens".
type TokenCheck struct {
	Counter        string  // "counter": the counter's sample name
	ServerIncrease float64 // "server_increase": its rise over the measured phase
	ClientTokens   int     // "client_tokens": the run's usage completion tokens, summed
	Difference     float64 // "difference": server_increase - client_tokens
	// Allowance is "allowance": the largest difference the window edges
	// and the requests without usage explain (PROTOCOL.md#anvil-go).
	Allowance float64
	// Verdict is "verdict": "exact", "agree" or "mismatch" (Judge).
	Verdict string
	// Reason is "reason": what a mismatch means; nil otherwise.
	Reason *string

	shape shape
}

// TTFTCheck is "anvil_go.server_metrics.checks.ttft".
type TTFTCheck struct {
	Histogram string // "histogram": the histogram's family name
	// ServerRequests is "server_requests": the rise of its _count, the
	// requests the server timed over the measured phase.
	ServerRequests float64
	// ServerMeanMS is "server_mean_ms": the rise of its _sum over the rise
	// of its _count, in ms.
	ServerMeanMS float64
	// ClientMeanMS is "client_mean_ms": the client's mean time to the first
	// output token over the same requests.
	ClientMeanMS float64
	// NetworkAndClientMS is "network_and_client_ms": client_mean_ms -
	// server_mean_ms, the time the network and the client add.
	NetworkAndClientMS float64

	shape shape
}

// Audit is "anvil_go.audit": the client's audit of itself over the
// measured phase, and the verdict of the rule in PROTOCOL.md#anvil-go.
type Audit struct {
	// Verdict is "verdict": "ok", or "suspect" when a rule fired
	// (SetVerdict).
	Verdict string
	Reasons []string // "reasons": one sentence per rule that fired; [] when ok
	// SchedLatencyP99MS and SchedLatencyMaxMS are "sched_latency_p99_ms"
	// and "sched_latency_max_ms": the Go scheduler's latency (runnable to
	// running) over the phase, from the increase of runtime/metrics'
	// /sched/latencies:seconds, as bucket upper bounds; nil without a
	// sample in the phase.
	SchedLatencyP99MS *float64
	SchedLatencyMaxMS *float64
	SchedSamples      int // "sched_samples": scheduler latency samples in the phase
	// WakeLagP50MS, WakeLagP99MS and WakeLagMaxMS are "wake_lag_p50_ms",
	// "wake_lag_p99_ms" and "wake_lag_max_ms": how late the audit's own
	// timer wake-ups ran over the phase (the time a processor-starved
	// client stamps late, which the scheduler's histogram does not see),
	// nearest rank, as bucket upper bounds; nil without a wake-up.
	WakeLagP50MS *float64
	WakeLagP99MS *float64
	WakeLagMaxMS *float64
	WakeSamples  int // "wake_samples": the wake-ups measured
	// HeldWakeLagP90MS and HeldWakeLagMaxMS are "held_wake_lag_p90_ms" and
	// "held_wake_lag_max_ms": the part of each wake-up's lag the client's
	// own work accounts for (its lag, at most the CPU time the process
	// used since the previous wake-up), nearest rank, as bucket upper
	// bounds: intermittent stalls of the client itself, not of the
	// machine; nil without a wake-up or where the platform does not say.
	HeldWakeLagP90MS *float64
	HeldWakeLagMaxMS *float64
	// GCPauses is "gc_pauses", GCPauseMaxMS "gc_pause_max_ms" and
	// GCPauseTotalMS "gc_pause_total_ms": stop-the-world GC pauses in the
	// phase (/gc/pauses:seconds); the max and total from bucket bounds,
	// nil without a pause.
	GCPauses       int
	GCPauseMaxMS   *float64
	GCPauseTotalMS *float64
	// CPUShare is "cpu_share": the process's CPU time (user + system) over
	// the phase's wall time times GOMAXPROCS; nil where the platform does
	// not say.
	CPUShare   *float64
	GOMAXPROCS int // "gomaxprocs"
	// SendLagP99MS and SendLagMaxMS are "send_lag_p99_ms" and
	// "send_lag_max_ms": how late the open loop issued requests that were
	// not waiting for the in-flight cap; nil for a closed loop or without
	// such a request.
	SendLagP99MS *float64
	SendLagMaxMS *float64
	// PoolWaits is "pool_waits": measured requests that waited for a
	// connection from the pool; PoolWaitMaxMS "pool_wait_max_ms" the
	// longest wait, nil when none waited.
	PoolWaits     int
	PoolWaitMaxMS *float64

	shape shape
}

// Judge sets c.Verdict, and c.Reason for a mismatch, from its Difference
// and Allowance and from resets, the times the counter fell during the
// run (capacity/PROTOCOL.md#anvil-go): "exact" when the difference is 0,
// "agree" when it is within the allowance, "mismatch" otherwise, and
// always "mismatch" after a reset (the server restarted: the counter's
// increase does not cover the run).
func (c *TokenCheck) Judge(resets int) {
	d := c.Difference
	c.Verdict, c.Reason = tokensMismatch, nil
	switch {
	case resets > 0:
		c.Reason = new(fmt.Sprintf("%s was reset %d times during the run (the server restarted): its increase does not cover the run", c.Counter, resets))
	case d == 0:
		c.Verdict = tokensExact
	case math.Abs(d) <= c.Allowance:
		c.Verdict = tokensAgree
	case d > 0:
		c.Reason = new(fmt.Sprintf("the server generated %g tokens more than the run's responses reported (allowance %g): another client was using the server, or requests the run gave up on kept decoding", d, c.Allowance))
	default:
		c.Reason = new(fmt.Sprintf("the server counted %g tokens fewer than the run's responses reported (allowance %g): the endpoint is not (only) the server that answered, e.g. one replica behind a load balancer", -d, c.Allowance))
	}
}

// SetVerdict sets a.Verdict from a.Reasons: "suspect" when a rule fired
// (a reason is listed), else "ok". A nil Reasons becomes [].
func (a *Audit) SetVerdict() {
	if a.Reasons == nil {
		a.Reasons = []string{}
	}
	a.Verdict = auditOK
	if len(a.Reasons) > 0 {
		a.Verdict = auditSuspect
	}
}

// Suspect reports whether a's verdict is "suspect": the run's timings may
// be the client's, not the server's. A nil audit is not suspect.
func (a *Audit) Suspect() bool { return a != nil && a.Verdict == auditSuspect }

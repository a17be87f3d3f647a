package capacity

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// runFake runs w against a fake started with cfg in the current synctest
// bubble and checks that no goroutine of the run outlives Run; the fake is
// closed when the test ends.
func runFake(t *testing.T, cfg fakeserver.Config, w Workload) (*artifact.Report, error) {
	t.Helper()
	srv := fakeserver.NewInMemory(cfg)
	t.Cleanup(srv.Close)
	rep, err := Run(t.Context(), Target{BaseURL: srv.URL + "/v1", HTTPClient: srv.Client()}, w)
	synctest.Wait()
	require.Empty(t, goroutinesIn("github.com/anvilbench/anvil/capacity."), "no goroutine of the run outlives Run")
	return rep, err
}

// faultAt returns the Fast profile with fault applied to the request that
// arrives index-th.
func faultAt(index int, f fakeserver.Fault) fakeserver.Config {
	cfg := fakeserver.Fast()
	cfg.Faults.ByIndex = map[int]fakeserver.Fault{index: f}
	return cfg
}

// TestRunFaultOutcomes checks the outcome of every server misbehaviour of
// capacity/PROTOCOL.md#failure-classes: request 1 of 3 (concurrency 1, so arrival order is
// request order) misbehaves; it becomes the expected failure, the others
// stay latency samples, and the failure never enters a distribution.
func TestRunFaultOutcomes(t *testing.T) {
	tests := []struct {
		fault    fakeserver.Fault
		w        Workload
		class    artifact.FailureClass
		errType  string
		message  string
		status   int
		received bool
		slow     bool // skipped with -short (the unit tests cover it)
	}{
		{fault: "http_429", errType: client.ErrorTypeHTTPStatus, class: artifact.FailureHTTPError, status: 429, received: true, message: "HTTP 429 Too Many Requests: {"},
		{fault: "http_500", errType: client.ErrorTypeHTTPStatus, class: artifact.FailureHTTPError, status: 500, received: true, message: "The server had an error"},
		{fault: "http_503", errType: client.ErrorTypeHTTPStatus, class: artifact.FailureHTTPError, status: 503, received: true, message: "HTTP 503"},
		{fault: "http_400", errType: client.ErrorTypeHTTPStatus, class: artifact.FailureHTTPError, status: 400, received: true, message: "invalid_request_error"},
		{fault: "drop", errType: client.ErrorTypeEOF, class: artifact.FailureStreamValidation, status: 200, received: true, message: "connection dropped mid-stream (unexpected EOF)"},
		{fault: "stall", w: Workload{StallTimeout: 5 * time.Second}, errType: client.ErrorTypeStall, class: artifact.FailureTimeout, status: 200, received: true, message: "stream idle longer than Workload.StallTimeout (5s)"},
		{fault: "slow_headers", w: Workload{StallTimeout: 5 * time.Second}, errType: client.ErrorTypeStall, class: artifact.FailureTimeout, message: "no response headers within Workload.StallTimeout (5s)"},
		{fault: "slow_headers", w: Workload{Timeout: 10 * time.Second}, errType: client.ErrorTypeTimeout, class: artifact.FailureTimeout, message: "no response headers within Workload.Timeout (10s)"},
		{fault: "endless", w: Workload{Timeout: 10 * time.Second}, errType: client.ErrorTypeTimeout, class: artifact.FailureTimeout, status: 200, received: true, message: "request exceeded Workload.Timeout (10s)"},
		{fault: "endless", errType: client.ErrorTypeTooManyEvents, class: artifact.FailureStreamValidation, status: 200, received: true, message: "more chunks than any max_tokens allows", slow: true},
		{fault: "malformed_json", errType: client.ErrorTypeMalformedChunk, class: artifact.FailureStreamValidation, status: 200, received: true, message: "malformed JSON chunk"},
		{fault: "stream_error", errType: client.ErrorTypeServerError, class: artifact.FailureStreamValidation, status: 200, received: true, message: "in-stream error object"},
		{fault: "oversized_event", errType: client.ErrorTypeEventTooLarge, class: artifact.FailureStreamValidation, status: 200, received: true, message: "event larger than MaxEventSize"},
		{fault: "reasoning_only", errType: client.ErrorTypeNoVisibleContent, class: artifact.FailureStreamValidation, status: 200, received: true, message: "stream completed without visible content"},
		{fault: "empty_body", errType: client.ErrorTypeNoVisibleContent, class: artifact.FailureStreamValidation, status: 200, received: true, message: "stream completed without visible content"},
		{fault: "wrong_content_type", errType: client.ErrorTypeContentType, class: artifact.FailureStreamValidation, status: 200, received: true, message: `Content-Type "application/json" is not text/event-stream`},
		{fault: "omit_marker", w: Workload{RequestCanaries: true}, errType: client.ErrorTypeCanary, class: artifact.FailureRequestCanary, status: 200, received: true, message: "marker missing"},
		{fault: "late_marker", w: Workload{RequestCanaries: true}, errType: client.ErrorTypeCanary, class: artifact.FailureRequestCanary, status: 200, received: true, message: "marker not at the start"},
		{fault: "foreign_marker", w: Workload{RequestCanaries: true}, errType: client.ErrorTypeCanary, class: artifact.FailureRequestCanary, status: 200, received: true, message: "peer marker"},
		{fault: "extra_words", w: Workload{ResponseWords: 5, ControlledOutputPolicy: policyStrict}, errType: client.ErrorTypeControlledOutput, class: artifact.FailureControlledOutput, status: 200, received: true, message: "want exactly 5 words \"code\""},
	}
	for _, tt := range tests {
		t.Run(string(tt.fault)+"/"+string(tt.class), func(t *testing.T) {
			if tt.slow && testing.Short() {
				t.Skip("streams maxStreamEvents events")
			}
			synctest.Test(t, func(t *testing.T) {
				w := tt.w
				w.Requests, w.Concurrency, w.Seed = 3, 1, 7
				rep, err := runFake(t, faultAt(1, tt.fault), w)
				require.NoError(t, err)
				require.Len(t, rep.Failures, 1, "failures: %+v", rep.Failures)
				f := rep.Failures[0]
				require.Equal(t, 1, f.RequestIndex)
				require.Equal(t, tt.class, f.FailureClass)
				require.Equal(t, tt.errType, f.ErrorType)
				require.Contains(t, f.ErrorMessage, tt.message)
				require.Equal(t, tt.received, f.ResponseReceived)
				require.False(t, f.PerformanceEligible)
				if tt.status != 0 {
					require.Equal(t, tt.status, *f.HTTPStatus)
				} else {
					require.Nil(t, f.HTTPStatus)
				}
				require.Equal(t, tt.received, f.ResponseMetadata != nil, "metadata exactly when a response arrived")
				require.Len(t, rep.RequestTimings, 2)
				require.Equal(t, []int{0, 2}, []int{rep.RequestTimings[0].RequestIndex, rep.RequestTimings[1].RequestIndex})
				require.False(t, rep.PerformanceEligible)
				require.Equal(t, 2, rep.Metrics.TTFT.Samples, "the failure is kept out of the distributions")
				require.Nil(t, rep.Metrics.ThroughputTokS)
			})
		})
	}
}

// TestRunDisobedienceObserved: under the observe policy a response with
// extra words stays a sample, its adherence recorded as not exact.
func TestRunDisobedienceObserved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rep, err := runFake(t, faultAt(1, "extra_words"), Workload{Requests: 3, Concurrency: 1, ResponseWords: 5, RequestCanaries: true})
		require.NoError(t, err)
		require.Empty(t, rep.Failures)
		require.Equal(t, 3, rep.Metrics.ControlledOutputSamples)
		require.Equal(t, 2, rep.Metrics.ControlledOutputExactAdherence)
		require.Equal(t, 3, rep.Metrics.RequestCanaryPassed)
		co := rep.RequestTimings[1].ControlledOutput
		require.False(t, *co.ExactAdherence)
		require.True(t, co.Passed)
		require.Equal(t, 2, co.ObservedExtraWords, "%q", " and more")
	})
}

// TestRunDialects runs every wire dialect the fake speaks; each must be
// measured without failure, and exact-token fields follow the usage.
func TestRunDialects(t *testing.T) {
	tests := []struct {
		name      string
		dialect   fakeserver.Dialect
		source    artifact.OutputTokenSource
		reasoning bool
	}{
		{"vllm", fakeDialect("vllm"), artifact.SourceUsage, true},
		{"ollama", fakeDialect("ollama"), artifact.SourceUsage, true},
		{"mock-llm", fakeDialect("mock-llm"), artifact.SourceContentChunks, true},
		{"usage in last choice", fakeserver.Dialect{Usage: "last-choice"}, artifact.SourceUsage, true},
		{"no done", fakeserver.Dialect{OmitDone: true}, artifact.SourceUsage, true},
		{"crlf, keep-alive, finish chunk", fakeserver.Dialect{CRLF: true, KeepAlive: 5 * time.Millisecond, FinishChunk: true, EscapeHTML: true}, artifact.SourceUsage, true},
		{"role in first delta, reasoning field", fakeserver.Dialect{Role: "first", ReasoningField: "reasoning"}, artifact.SourceUsage, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := fakeserver.Fast()
				cfg.Dialect = tt.dialect
				rep, err := runFake(t, cfg, Workload{Requests: 4, Concurrency: 2, RequestCanaries: true})
				require.NoError(t, err)
				require.Empty(t, rep.Failures)
				require.Equal(t, 4, rep.Completed)
				require.Equal(t, 4, rep.Metrics.RequestCanaryPassed)
				require.Equal(t, map[artifact.OutputTokenSource]int{tt.source: 4}, rep.Metrics.OutputTokenSources)
				if tt.source == artifact.SourceUsage {
					require.NotNil(t, rep.Metrics.OutputTokens)
					require.Equal(t, 4, rep.Metrics.TPOT.Samples)
					require.NotNil(t, rep.Metrics.ThroughputTokS)
				} else {
					require.Nil(t, rep.Metrics.OutputTokens)
					require.Nil(t, rep.Metrics.ThroughputTokS)
					require.NotNil(t, rep.Metrics.ContentChunksPerSecond)
					require.Equal(t, 0, rep.Metrics.TPOT.Samples, "no exact tokens, no tpot")
					require.Nil(t, rep.RequestTimings[0].PromptTokens)
				}
				require.Equal(t, tt.reasoning, rep.Metrics.ReasoningChunks > 0)
			})
		})
	}
}

// TestRunKeepAliveIsNotAStall: SSE keep-alive comments are activity. A
// 65,536-token prefill takes the reasoning profile about 8 s; under a 5 s
// StallTimeout it is a stall when the server stays silent, and not when it
// sends a keep-alive comment every second.
func TestRunKeepAliveIsNotAStall(t *testing.T) {
	for _, keepAlive := range []time.Duration{0, time.Second} {
		t.Run(fmt.Sprintf("keep-alive=%v", keepAlive), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := fakeProfile("reasoning")
				cfg.Dialect.KeepAlive = keepAlive
				rep, err := runFake(t, cfg, Workload{Requests: 1, MaxTokens: 1024, ContextTokens: 65536, StallTimeout: 5 * time.Second})
				require.NoError(t, err)
				if keepAlive == 0 {
					require.Len(t, rep.Failures, 1)
					require.Equal(t, artifact.FailureTimeout, rep.Failures[0].FailureClass)
					require.Contains(t, rep.Failures[0].ErrorMessage, "stream idle longer than Workload.StallTimeout (5s)")
					require.Equal(t, 5000.0, rep.Failures[0].ElapsedMS, "the stall timer starts with the headers")
					return
				}
				require.Empty(t, rep.Failures)
				require.Greater(t, rep.RequestTimings[0].TimeToFirstOutputMS, 5000.0)
			})
		})
	}
}

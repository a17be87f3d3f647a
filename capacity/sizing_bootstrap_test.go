package capacity

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/budget"
	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// bodyBound is the documented bound on a request body for a prompt
// planned at context tokens: twice maxPromptChars (JSON escapes at most
// every other filler character) plus the fixed fields.
func bodyBound(context int) int { return 2*budget.MaxChars(context) + 4096 }

// TestExactSizingLlamaCppColdStart is the acceptance test of the
// bootstrap: against a server built from the llama.cpp b10573 captures,
// whose tiny tokenizer counts 1.1 characters per token so that the
// reference's 3.0 makes a 7,000-token plan 2.7 times the 8,192-token
// window, exact sizing discovers the window from /v1/models (meta.n_ctx)
// and, from a cold start, sizes every prompt exactly with llama.cpp's
// /apply-template and /tokenize, and within 1 % from calibration requests
// without them. No calibration request is refused.
func TestExactSizingLlamaCppColdStart(t *testing.T) {
	for _, noTokenize := range []bool{false, true} {
		t.Run(fmt.Sprintf("no-tokenize=%t", noTokenize), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := newLlamaCppServer(t)
				srv.noTokenize = noTokenize
				target := Target{BaseURL: "http://llama.invalid/v1", HTTPClient: wiretest.Serve(t, srv.handler())}
				rep, err := Run(t.Context(), target, Workload{MaxTokens: 64, Requests: 8, Concurrency: 2, ContextTokens: 7000, PromptSizing: promptSizingExact})
				require.NoError(t, err)
				require.Equal(t, 8, rep.Completed, "failures: %+v", rep.Failures)
				require.Zero(t, srv.refused.Load(), "no request was refused over the window")
				require.Equal(t, "tiny.gguf", rep.Model)
				cw := rep.AnvilGo.ContextWindow
				require.Equal(t, artifact.ContextWindow{Tokens: 8192, Source: "/models", Advertised: new(8192),
					AdvertisedSource: new("/models"), TruncationWindow: 8192, Slots: new(4), SlotsSource: new("/props")}, *cw)

				ps := rep.AnvilGo.PromptSizing
				errs := countedErrors(t, rep)
				t.Logf("max relative error %.5f, %d calibration requests, %.3f characters per token", *ps.MaxRelativeError, ps.CalibrationRequests, ps.CharsPerToken)
				if noTokenize {
					require.Equal(t, sizingSourceCalibration, *ps.Source)
					require.LessOrEqual(t, slicesMax(errs), 0.01)
					require.LessOrEqual(t, ps.CalibrationRequests, calibrationSteps)
				} else {
					require.Equal(t, sizingSourceTokenize, *ps.Source)
					require.Equal(t, "/tokenize (after /apply-template)", *ps.TokenizePath)
					require.Zero(t, slicesMax(errs), "the templated count is the server's")
					require.Equal(t, 1, ps.CalibrationRequests)
				}
				require.InDelta(t, 1.1, ps.CharsPerToken, 0.02)
				require.Nil(t, ps.Warning, "exact prompts are on plan")
				require.Zero(t, ps.OffPlanRequests)
				require.Equal(t, 8, ps.CountedRequests)
				require.LessOrEqual(t, srv.largestBody, bodyBound(7000))
			})
		})
	}
}

// TestReferenceSizingLlamaCppSaysSo: with reference sizing on the same
// server, a plan that fits the window in counted tokens succeeds but its
// prompts count 2.7 times their plan, and a larger plan is refused over the
// window on every request; either way the run says how far off the
// prompts were, counting the refusals' n_prompt_tokens, and names exact
// sizing.
func TestReferenceSizingLlamaCppSaysSo(t *testing.T) {
	tests := []struct {
		context   int
		completed int
		refused   string
	}{
		{2000, 4, ""},
		{7000, 0, "4 of them refused over the window"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.context), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := newLlamaCppServer(t)
				target := Target{BaseURL: "http://llama.invalid/v1", HTTPClient: wiretest.Serve(t, srv.handler())}
				rep, err := Run(t.Context(), target, Workload{MaxTokens: 64, Requests: 4, Concurrency: 1, ContextTokens: tt.context})
				require.NoError(t, err)
				require.Equal(t, tt.completed, rep.Completed)
				ps := rep.AnvilGo.PromptSizing
				require.Equal(t, 4, ps.CountedRequests)
				require.Equal(t, 4, ps.OffPlanRequests)
				require.NotNil(t, ps.CountedOverPlanned)
				require.InDelta(t, 2.76, *ps.CountedOverPlanned, 0.02)
				require.NotNil(t, ps.Warning)
				t.Log(*ps.Warning)
				require.Contains(t, *ps.Warning, "at 2.7")
				require.Contains(t, *ps.Warning, "x their plan")
				require.Contains(t, *ps.Warning, "ANVIL_PROMPT_SIZING=exact")
				require.Contains(t, *ps.Warning, tt.refused)
				for _, d := range rep.AnvilGo.Requests {
					require.NotNil(t, d.CountedPromptTokens, "request %d: counted by usage or by the refusal", d.RequestIndex)
				}
			})
		})
	}
}

// lyingUsageServer answers every chat request with a stream whose
// usage.prompt_tokens is usage(characters of the user message), and
// records the largest body it received.
type lyingUsageServer struct {
	usage       func(chars int) int
	tokenize    func(chars int) int // nil: no /tokenize
	largestBody atomic.Int64
	chats       atomic.Int32
}

var userContent = regexp.MustCompile(`"content":"((?:[^"\\]|\\.)*)"`)

func (s *lyingUsageServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if int64(len(raw)) > s.largestBody.Load() {
		s.largestBody.Store(int64(len(raw)))
	}
	m := userContent.FindSubmatch(raw)
	chars := 0
	if m != nil {
		chars = len(m[1])
	}
	switch {
	case strings.HasSuffix(r.URL.Path, "/chat/completions"):
		s.chats.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}\n\n"+
			"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n", s.usage(chars))
	case r.URL.Path == "/tokenize" && s.tokenize != nil && m != nil:
		fmt.Fprintf(w, `{"count":%d}`, s.tokenize(chars))
	default:
		http.NotFound(w, r)
	}
}

// TestCalibrationBoundsLyingUsage is the regression test of the crash
// (issue 18 item 1): servers whose usage.prompt_tokens lies during
// calibration make exact sizing fail with errPromptSizing naming the
// counts, before any measured request, and no body they receive exceeds
// the documented bound for the 65,536-token plan.
func TestCalibrationBoundsLyingUsage(t *testing.T) {
	tests := []struct {
		name     string
		usage    func(chars int) int
		tokenize func(chars int) int
		want     string
	}{
		{"one token", func(int) int { return 1 }, nil, "24576.0 characters per token, above the plausible 10"},
		{"constant", func(int) int { return 20000 }, nil, "did not grow with the prompt"},
		{"falling", func(c int) int { return max(1, 40000-c/3) }, nil, "moved the wrong way"},
		{"implausibly many", func(c int) int { return c * 4 }, nil, "outside the plausible 0.5..10"},
		{"tokenize one token", func(c int) int { return c / 3 }, func(int) int { return 1 }, "above the plausible 10 characters per token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := &lyingUsageServer{usage: tt.usage, tokenize: tt.tokenize}
				target := pipeTarget(t, srv)
				target.MaxModelLen = 131072
				_, err := Run(t.Context(), target, Workload{MaxTokens: 64, Requests: 4, ContextTokens: 65536, PromptSizing: promptSizingExact})
				require.ErrorIs(t, err, errPromptSizing)
				t.Log(err)
				require.ErrorContains(t, err, tt.want)
				require.ErrorContains(t, err, "tokens")
				require.LessOrEqual(t, srv.largestBody.Load(), int64(bodyBound(65536)))
				require.LessOrEqual(t, srv.chats.Load(), int32(maxCalibrationRequests), "calibration requests only")
			})
		})
	}
}

// TestCalibrationLearnsFromARefusal: a llama.cpp whose slots are smaller
// than /v1/models says (refusing at 4096 while advertising 8192) refuses
// the fourfold calibration step of a 7000-token plan with
// exceed_context_size_error; its n_prompt_tokens is believed as a count
// and its n_ctx as the window, so calibration fails at once naming the
// refusal's window instead of sending more, and no measured request is
// sent.
func TestCalibrationLearnsFromARefusal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newLlamaCppServer(t)
		srv.noTokenize, srv.window = true, 4096
		target := Target{BaseURL: "http://llama.invalid/v1", HTTPClient: wiretest.Serve(t, srv.handler())}
		_, err := Run(t.Context(), target, Workload{MaxTokens: 64, Requests: 3, ContextTokens: 7000, PromptSizing: promptSizingExact})
		require.ErrorIs(t, err, errPromptSizing)
		t.Log(err)
		require.ErrorContains(t, err, "counted at 5662 tokens over its window of 4096 tokens (n_ctx), and request 0 is planned at 7000, not below 3552")
		require.EqualValues(t, 1, srv.refused.Load())
		require.EqualValues(t, 2, srv.chats.Load(), "two calibration requests, no measured one")
	})
}

package capacity

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// sizedSource is a SizedSource of one user message of filler per request,
// PromptTokens planned[i], written at the ratio SizedAt gave (3.0 until
// then); it records the ratios it was given.
type sizedSource struct {
	planned []int
	ratio   float64
	given   *[]float64
}

func (s sizedSource) SizedAt(r float64) Source {
	*s.given = append(*s.given, r)
	s.ratio = r
	return s
}

func (s sizedSource) Request(_ context.Context, i int) (Request, error) {
	ratio := s.ratio
	if ratio == 0 {
		ratio = promptCharsPerToken
	}
	n := int(float64(s.planned[i]) * ratio)
	text := strings.Repeat(fmt.Sprintf("line %d of the request's own text\n", i), n/20+1)[:n]
	return Request{Messages: []Message{{Role: "user", Content: text}}, PromptTokens: s.planned[i]}, nil
}

// TestSizedSourceExactSizing: with exact sizing, against the server of the
// llama.cpp b10573 captures (1.1 characters per token, a window of 8192
// that refuses the reference's 3.0 characters per token at these sizes),
// a SizedSource is given the learned ratio once, before its first request,
// with /tokenize and from calibration, and its prompts count within 1 %
// of their plan. A Source that is no SizedSource is refused.
func TestSizedSourceExactSizing(t *testing.T) {
	for _, noTokenize := range []bool{false, true} {
		t.Run(fmt.Sprintf("no-tokenize=%t", noTokenize), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := newLlamaCppServer(t)
				srv.noTokenize = noTokenize
				target := Target{BaseURL: "http://llama.invalid/v1", HTTPClient: wiretest.Serve(t, srv.handler())}
				var given []float64
				src := sizedSource{planned: []int{3000, 5000, 7000, 4000}, given: &given}
				rep, err := Run(t.Context(), target, Workload{MaxTokens: 64, Requests: 4, Concurrency: 2, ContextTokens: 4000,
					PromptSizing: promptSizingExact, Source: src})
				require.NoError(t, err)
				require.Equal(t, 4, rep.Completed, "failures: %+v", rep.Failures)
				require.Zero(t, srv.refused.Load())
				require.Len(t, given, 1)
				require.InDelta(t, 1.1, given[0], 0.02)
				ps := rep.AnvilGo.PromptSizing
				require.Equal(t, given[0], ps.CharsPerToken)
				require.Equal(t, 4, ps.CountedRequests)
				require.LessOrEqual(t, *ps.MaxRelativeError, 0.01)
			})
		})
	}
	_, err := Workload{PromptSizing: promptSizingExact, Source: sizedSource{planned: []int{1}, given: new([]float64)}}.Resolved()
	require.NoError(t, err, "a SizedSource is sized")
}

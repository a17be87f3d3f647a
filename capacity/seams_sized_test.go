package capacity

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/anvilbench/anvil/capacity/internal/budget"
	"github.com/anvilbench/anvil/capacity/internal/prompt"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// sizedSource is a SizedSource of one user message of filler per request,
// PromptTokens planned[i]: reference-sized at 3.0 characters per token
// until SizedBy sizes each message, less the template's tokens, with the
// Sizer's counts; it counts the times it was sized.
type sizedSource struct {
	planned []int
	chars   []int // nil: 3.0 characters per planned token
	sized   *int
}

// sourceText is request i's text of n characters.
func sourceText(i, n int) string {
	return strings.Repeat(fmt.Sprintf("line %d of the request's own text\n", i), n/20+1)[:n]
}

func (s sizedSource) SizedBy(ctx context.Context, z Sizer) (Source, error) {
	*s.sized++
	t0, err := z.Template(ctx, 0)
	if err != nil {
		return nil, err
	}
	c, err := z.Counter(ctx, TextKind{Name: "source text", Tokens: s.planned,
		Write: func(dst []byte, n int) []byte { return append(dst, sourceText(-1, n)...) }})
	if err != nil {
		return nil, err
	}
	s.chars = make([]int, len(s.planned))
	for i, p := range s.planned {
		r, err := budget.Search(func(n int) (int, error) { return c.Count(ctx, sourceText(i, n)) }, p-t0, 0, budget.MaxChars(p), 3*p)
		if err != nil {
			return nil, err
		}
		s.chars[i] = r.Budget
	}
	return s, nil
}

func (s sizedSource) Request(_ context.Context, i int) (Request, error) {
	n := int(float64(s.planned[i]) * prompt.CharsPerToken)
	if s.chars != nil {
		n = s.chars[i]
	}
	return Request{Messages: []Message{{Role: "user", Content: sourceText(i, n)}}, PromptTokens: s.planned[i]}, nil
}

// TestSizedSourceExactSizing: with exact sizing, against the server of the
// llama.cpp b10573 captures (1.1 characters per token, 52 tokens of
// template, a window of 8192 that refuses the reference's 3.0 characters
// per token at these sizes), a SizedSource is sized once, before its
// first request, with /tokenize and from calibration, and its prompts
// count within 1 % of their plan. A Source that is no SizedSource is
// refused.
func TestSizedSourceExactSizing(t *testing.T) {
	for _, noTokenize := range []bool{false, true} {
		t.Run(fmt.Sprintf("no-tokenize=%t", noTokenize), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := newLlamaCppServer(t)
				srv.noTokenize = noTokenize
				target := Target{BaseURL: "http://llama.invalid/v1", HTTPClient: wiretest.Serve(t, srv.handler())}
				sized := 0
				src := sizedSource{planned: []int{3000, 5000, 7000, 4000}, sized: &sized}
				rep, err := Run(t.Context(), target, Workload{MaxTokens: 64, Requests: 4, Concurrency: 2, ContextTokens: 4000,
					PromptSizing: promptSizingExact, Source: src})
				require.NoError(t, err)
				require.Equal(t, 4, rep.Completed, "failures: %+v", rep.Failures)
				require.Zero(t, srv.refused.Load())
				require.Equal(t, 1, sized)
				ps := rep.AnvilGo.PromptSizing
				require.InDelta(t, 1.2, ps.CharsPerToken, 0.05, "this text's ratio on the tiny model")
				require.NotNil(t, ps.TemplateTokens)
				require.Equal(t, 52, *ps.TemplateTokens)
				require.Equal(t, 4, ps.CountedRequests)
				require.LessOrEqual(t, *ps.MaxRelativeError, 0.01)
			})
		})
	}
	_, err := Workload{PromptSizing: promptSizingExact, Source: sizedSource{planned: []int{1}, sized: new(int)}}.Resolved()
	require.NoError(t, err, "a SizedSource is sized")
}

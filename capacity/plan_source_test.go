package capacity

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNewPlanSourceCapsTheWarmupAlone: with a Source the measured prompts
// are the source's, so a 10,000-request trace never hits the planned-token
// cap through synthetic contexts it does not send; the warm-up's contexts,
// which are sent, still count.
func TestNewPlanSourceCapsTheWarmupAlone(t *testing.T) {
	src := SourceFunc(func(context.Context, int) (Request, error) { return Request{PromptTokens: 1}, nil })
	w := Workload{Requests: 10000, MaxTokens: 16}
	_, err := newPlan(w, 1<<20, defaultMargin, "")
	var ce *FieldError
	require.True(t, errors.As(err, &ce), "the synthetic plan of 10000 sampled contexts is over the cap: %v", err)
	require.Equal(t, "Workload.Requests", ce.Field)

	w.Source = src
	p, err := newPlan(w, 1<<20, defaultMargin, "")
	require.NoError(t, err)
	require.Equal(t, 10000, p.Len())

	w.Warmup = 10000
	_, err = newPlan(w, 1<<20, defaultMargin, "")
	require.True(t, errors.As(err, &ce), "10000 sampled warm-up requests are over the cap: %v", err)
	require.Equal(t, "Workload.Warmup", ce.Field)
}

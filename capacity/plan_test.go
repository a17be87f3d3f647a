package capacity

import (
	"reflect"
	"testing"
	"time"

	"github.com/anvilbench/anvil/capacity/internal/contextdraw"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

func TestNewPlanFixedContext(t *testing.T) {
	// The seed artifact's workload: 6 requests of 65,536 tokens, seed 1717,
	// max_tokens 8192, a 262,144-token model.
	p, err := newPlan(Workload{Requests: 6, Concurrency: 1, ContextTokens: 65536, Seed: 1717, MaxTokens: 8192, RequestCanaries: true}, 262144, defaultMargin, "")
	require.NoError(t, err)
	require.Equal(t, 262144-8192-1024, p.PromptBudget)
	require.Equal(t, []int{65536, 65536, 65536, 65536, 65536, 65536}, p.Contexts)
	require.Equal(t, map[int]int{65536: 6}, p.ContextDistribution())
	require.Equal(t, 6*65536, p.PlannedPromptTokens())
	require.Equal(t, "ANVIL_REQ_1717_00000", p.Marker(0))
	require.Equal(t, "ANVIL_REQ_1717_00005", p.Marker(5))

	off, err := newPlan(Workload{Requests: 2}, 262144, defaultMargin, "")
	require.NoError(t, err)
	require.Empty(t, off.Marker(0))
}

func TestNewPlanClampsToBudget(t *testing.T) {
	// Budget 100000 - 64 - 1024 = 98912: the 131072 draw of seed 1717 is
	// clamped, the others are kept.
	p, err := newPlan(Workload{Requests: 8, Seed: 1717, MaxTokens: referenceMaxTokens}, 100000, defaultMargin, "")
	require.NoError(t, err)
	require.Equal(t, []int{65536, 32768, 98912, 16000, 32768, 65536, 32768, 32768}, p.Contexts)
	require.Equal(t, map[int]int{16000: 1, 32768: 4, 65536: 2, 98912: 1}, p.ContextDistribution())

	fixed, err := newPlan(Workload{Requests: 3, ContextTokens: 500000, MaxTokens: referenceMaxTokens}, 131072, 0, "")
	require.NoError(t, err)
	require.Equal(t, []int{131072 - 64, 131072 - 64, 131072 - 64}, fixed.Contexts)
}

func TestNewPlanIsPure(t *testing.T) {
	w := Workload{Requests: 500, Seed: -77, RequestCanaries: true, PromptCacheMode: promptCacheUnique}
	a, err := newPlan(w, 262144, defaultMargin, "n1")
	require.NoError(t, err)
	b, err := newPlan(w, 262144, defaultMargin, "n1")
	require.NoError(t, err)
	if diff := cmp.Diff(a, b, cmp.Exporter(func(reflect.Type) bool { return true }), cmp.Comparer(func(x, y func(Progress)) bool { return x == nil && y == nil })); diff != "" {
		t.Fatalf("two plans of one workload differ:\n%s", diff)
	}
}

func TestNewPlanErrors(t *testing.T) {
	tests := []struct {
		name        string
		w           Workload
		maxModelLen int
		margin      int
		nonce       string
		wantErr     string
	}{
		{"invalid workload", Workload{Concurrency: 20000}, 8192, 1024, "", "Workload.Concurrency = 20000: must be in 1..16384"},
		{"unknown model length", Workload{}, 0, 1024, "", "Target.MaxModelLen = 0: must be in 1..1048576 once resolved"},
		{"model length over", Workload{}, 1048577, 1024, "", "Target.MaxModelLen = 1048577: must be in 1..1048576"},
		{"margin negative", Workload{}, 8192, -1, "", "Target.Margin = -1: must be in 0..1048576 once resolved"},
		{"no budget", Workload{MaxTokens: 4000}, 4096, 1024, "", "Target.MaxModelLen = 4096: leaves a prompt budget of -928 tokens after MaxTokens 4000 and Margin 1024; must leave at least 1"},
		{"zero budget", Workload{MaxTokens: 3072}, 4096, 1024, "", "leaves a prompt budget of 0 tokens"},
		{"unique needs a nonce", Workload{PromptCacheMode: promptCacheUnique}, 8192, 1024, "", `unique-mode nonce "" must be`},
		{"nonce charset", Workload{PromptCacheMode: promptCacheUnique}, 8192, 1024, "a b", `unique-mode nonce "a b" must be`},
		{"sampled aggregate cap", Workload{Requests: maxRequests}, 1048576, 1024, "", "Workload.Requests = 16384: plans more than 67108864 prompt tokens in all (the first"},
		{"closing instruction does not fit", Workload{Requests: 1, ContextTokens: 32, ResponseWords: 99}, 8192, 1024, "", "Workload.ContextTokens = 32: must be at least 42: a prompt of 96 characters cannot hold the 124-character closing instruction of request 0"},
		// The context 32 is clamped to the 16-token budget: the budget is named.
		{"warm-up closing instruction does not fit", Workload{Requests: 1, ContextTokens: 32, Warmup: 1, MaxTokens: referenceMaxTokens}, 64 + 1024 + 16, 1024, "",
			"Target.MaxModelLen = 1104: leaves a prompt budget of 16 tokens (48 characters) after MaxTokens 64 and Margin 1024; warm-up request 0 needs at least 18 tokens for its 53-character closing instruction"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newPlan(tt.w, tt.maxModelLen, tt.margin, tt.nonce)
			require.ErrorIs(t, err, ErrInvalidConfig)
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}

func TestNewPlanDurationFitsTheCap(t *testing.T) {
	p, err := newPlan(Workload{Duration: time.Minute}, 1048576, defaultMargin, "")
	require.NoError(t, err)
	require.Equal(t, maxRequests, p.Workload.Requests)
	require.Less(t, p.Len(), maxRequests)
	require.LessOrEqual(t, p.PlannedPromptTokens(), maxPlannedPromptTokens)
	next := contextdraw.Sample(0, p.Len()+1)[p.Len()]
	require.Greater(t, p.PlannedPromptTokens()+next, maxPlannedPromptTokens, "the plan stops at the longest prefix that fits")
	// The kept prefix is exactly the non-duration draw.
	require.Equal(t, contextdraw.Sample(0, p.Len()), p.Contexts)
}

func TestPromptBudget(t *testing.T) {
	b, err := promptBudget(262144, 8192, 1024)
	require.NoError(t, err)
	require.Equal(t, 252928, b)
	b, err = promptBudget(1089, 64, 1024)
	require.NoError(t, err)
	require.Equal(t, 1, b)
	_, err = promptBudget(1088, 64, 1024)
	require.ErrorIs(t, err, ErrInvalidConfig)
}

func TestNewNonce(t *testing.T) {
	a, err := newNonce()
	require.NoError(t, err)
	b, err := newNonce()
	require.NoError(t, err)
	require.Regexp(t, `^[0-9a-f]{16}$`, a)
	require.NotEqual(t, a, b)
	_, err = newPlan(Workload{Requests: 1, PromptCacheMode: promptCacheUnique}, 16384, defaultMargin, a)
	require.NoError(t, err)
}

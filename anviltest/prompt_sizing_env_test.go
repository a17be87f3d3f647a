package anviltest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
)

// TestPromptSizingEnv: ANVIL_PROMPT_SIZING fills Workload.PromptSizing
// when the Workload leaves it empty, and a value other than reference or
// exact is an error naming the variable, the value and what is allowed.
func TestPromptSizingEnv(t *testing.T) {
	tests := []struct {
		env  string
		in   capacity.PromptSizing
		want capacity.PromptSizing
	}{
		{"", "", ""},
		{"exact", "", "exact"},
		{"reference", "", "reference"},
		{"exact", "reference", "reference"},
	}
	for _, tt := range tests {
		s := newSettings([]Option{WithEnvironment(env{envPromptSizing: tt.env}.get)})
		got, err := s.applyWorkloadEnv(capacity.Workload{PromptSizing: tt.in})
		require.NoError(t, err)
		require.Equal(t, tt.want, got.PromptSizing, "env %q, workload %q", tt.env, tt.in)
	}
	s := newSettings([]Option{WithEnvironment(env{envPromptSizing: "tokens"}.get)})
	_, err := s.applyWorkloadEnv(capacity.Workload{})
	var ee *capacity.FieldError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, envPromptSizing, ee.Field)
	require.EqualError(t, err, `anviltest: ANVIL_PROMPT_SIZING = "tokens": want "reference" or "exact"`)
}

// TestCapacityExactSizingEmbeddedFake: with ANVIL_PROMPT_SIZING=exact a
// benchmark against the embedded fake sizes its prompts with the fake's
// /tokenize, and every request's prompt is counted as planned.
func TestCapacityExactSizingEmbeddedFake(t *testing.T) {
	clearEnv(t)
	t.Setenv(envPromptSizing, "exact")
	setBenchtime(t, "4x")
	res := testing.Benchmark(func(b *testing.B) {
		r := Capacity(b, capacity.Workload{ContextTokens: 4096, Concurrency: 2, MaxTokens: 32}, withFakeProfile("fast"), withOutDir(t.TempDir()))
		require.Equal(b, "exact", r.AnvilGo.PromptSizing.Method)
		require.Equal(b, "tokenize", *r.AnvilGo.PromptSizing.Source)
		for _, row := range r.RequestTimings {
			require.Equal(b, row.PlannedContextTokens, *row.PromptTokens, "request %d", row.RequestIndex)
		}
	})
	require.Equal(t, 4, res.N, "the benchmark ran")
}

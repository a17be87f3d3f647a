package anviltest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
)

// TestMaxTokensEnv: ANVIL_MAX_TOKENS fills Workload.MaxTokens when the
// Workload leaves it at zero, and a value outside 1..65536 (the bound
// of Workload.MaxTokens) or not an integer is an error naming the
// variable, the value and what is allowed.
func TestMaxTokensEnv(t *testing.T) {
	tests := []struct {
		env      string
		in, want int
	}{
		{"", 0, 0},
		{"64", 0, 64},
		{"1", 0, 1},
		{"65536", 0, 65536},
		{"64", 1024, 1024},
	}
	for _, tt := range tests {
		s := newSettings([]Option{WithEnvironment(env{envMaxTokens: tt.env}.get)})
		got, err := s.applyWorkloadEnv(capacity.Workload{MaxTokens: tt.in})
		require.NoError(t, err)
		require.Equal(t, tt.want, got.MaxTokens, "env %q, workload %d", tt.env, tt.in)
	}
	for _, tt := range []struct{ env, err string }{
		{"0", `anviltest: ANVIL_MAX_TOKENS = "0": want an integer, 1 to 65536`},
		{"-5", `anviltest: ANVIL_MAX_TOKENS = "-5": want an integer, 1 to 65536`},
		{"65537", `anviltest: ANVIL_MAX_TOKENS = "65537": want an integer, 1 to 65536: capacity: Workload.MaxTokens = 65537: must be in 1..65536`},
		{"64k", `anviltest: ANVIL_MAX_TOKENS = "64k": want an integer, 1 to 65536: strconv.Atoi: parsing "64k": invalid syntax`},
	} {
		s := newSettings([]Option{WithEnvironment(env{envMaxTokens: tt.env}.get)})
		_, err := s.applyWorkloadEnv(capacity.Workload{})
		var fe *capacity.FieldError
		require.ErrorAs(t, err, &fe, "env %q", tt.env)
		require.Equal(t, envMaxTokens, fe.Field)
		require.EqualError(t, err, tt.err)
	}
}

// TestCapacityMaxTokensEmbeddedFake: ANVIL_MAX_TOKENS reaches the wire: a
// benchmark against the embedded fake whose Workload sets no MaxTokens
// records the variable's value as its max_tokens, and no answer is longer.
func TestCapacityMaxTokensEmbeddedFake(t *testing.T) {
	clearEnv(t)
	t.Setenv(envMaxTokens, "24")
	setBenchtime(t, "4x")
	res := testing.Benchmark(func(b *testing.B) {
		r := Capacity(b, capacity.Workload{ContextTokens: 4096, Concurrency: 2}, withFakeProfile("plain"), withOutDir(t.TempDir()))
		require.Equal(b, 24, r.MaxTokens)
		require.Len(b, r.RequestTimings, 4)
		for _, row := range r.RequestTimings {
			require.NotNil(b, row.OutputTokens, "request %d", row.RequestIndex)
			require.LessOrEqual(b, *row.OutputTokens, 24, "request %d", row.RequestIndex)
		}
	})
	require.Equal(t, 4, res.N, "the benchmark ran")
}

package client

import (
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTimingMethodology: the 13 keys, each a sentence in Go's words
// quoting the protocol constants from their definitions.
func TestTimingMethodology(t *testing.T) {
	m := TimingMethodology()
	keys := slices.Sorted(maps.Keys(m))
	// capacity/PROTOCOL.md#artifact-keys: the 13 keys of timing_methodology.
	require.Equal(t, []string{"artifact_timestamps", "clock", "controlled_output", "decode", "distributions",
		"effective_prefill", "generation", "mean_inter_token_latency", "p99", "request_canaries",
		"time_to_first_output", "tpot", "ttft"}, keys)
	for k, v := range m {
		require.NotEmpty(t, v, k)
		require.NotContains(t, v, "perf_counter", "%s names Python's clock", k)
		require.NotContains(t, v, "time_ns", "%s names Python's clock", k)
	}
	require.Contains(t, m[methodologyClock], "monotonic")
	require.Contains(t, m[methodologyClock], "time.Now")
	// The protocol constants are written from their definitions.
	require.Contains(t, m[methodologyControlledOutput], "captured up to 8192 characters")
	require.Contains(t, m[methodologyRequestCanaries], "captured up to 8192 characters")
	require.Contains(t, m[methodologyDistributions], "95% confidence interval of the mean (mean -/+ 1.96 stddev / sqrt(n))")
	require.Contains(t, m[methodologyP99], "below 100 successful samples")
	require.Contains(t, m[methodologyEffectivePrefill], "at or below 0.5 of its planned context, at or above the truncation window")
	m[methodologyClock] = "changed"
	require.NotEqual(t, "changed", TimingMethodology()[methodologyClock], "each call returns a new map")
}

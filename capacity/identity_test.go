package capacity

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRunIDAndISOSecond(t *testing.T) {
	at := time.Date(2026, 10, 5, 11, 42, 24, 999_999_999, time.UTC)
	require.Equal(t, "benchmark-20261005T114224Z", runID(at))
	require.Equal(t, "2026-10-05T11:42:24Z", isoSecond(at), "truncated, not rounded")
	paris := time.FixedZone("CEST", 2*3600)
	require.Equal(t, "benchmark-20261005T114224Z", runID(at.In(paris)))
	require.Equal(t, "2026-10-05T11:42:24Z", isoSecond(at.In(paris)))
}

func TestFingerprint(t *testing.T) {
	require.Equal(t, "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", Fingerprint(nil))
	fp := Fingerprint([]byte("vllm serve model --max-model-len 262144"))
	require.NoError(t, checkConfigurationFingerprint(fp))
	require.NoError(t, checkConfigurationFingerprint(""))
	require.ErrorIs(t, checkConfigurationFingerprint(strings.ToUpper(fp)), ErrInvalidConfig)
	require.ErrorIs(t, checkConfigurationFingerprint(fp+"0"), ErrInvalidConfig)
	_, err := Target{BaseURL: "http://h/v1", ConfigurationFingerprint: fp}.Resolved()
	require.NoError(t, err)
}

func TestCheckClockDomainID(t *testing.T) {
	for _, ok := range []string{"", "a", "lab-1.rack_2", strings.Repeat("Z", 64)} {
		require.NoError(t, checkClockDomainID(ok), ok)
	}
	for _, bad := range []string{" ", "a/b", "ünï", strings.Repeat("Z", 65), "a\nb"} {
		require.ErrorIs(t, checkClockDomainID(bad), ErrInvalidConfig, bad)
	}
}

func TestTimingMethodology(t *testing.T) {
	m := timingMethodology()
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
	require.NotEqual(t, "changed", timingMethodology()[methodologyClock], "each call returns a new map")
}

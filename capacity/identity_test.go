package capacity

import (
	"crypto/sha256"
	"encoding/hex"
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

// fingerprint is a configuration fingerprint of config, as a user makes
// one: "sha256:" + the lowercase hex SHA-256 of config.
func fingerprint(config []byte) string {
	sum := sha256.Sum256(config)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// TestConfigurationFingerprint: a fingerprint made as Target's doc says
// is accepted; one in upper case or a digit too long is not.
func TestConfigurationFingerprint(t *testing.T) {
	require.Equal(t, "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", fingerprint(nil))
	fp := fingerprint([]byte("vllm serve model --max-model-len 262144"))
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

package anviltest

import (
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
)

// inputKey is the API key of TestUserInputNeverEchoesCredentials, long
// enough that a value cut inside it would show a recognisable part.
const inputKey = "sk-INPUTKEY-0123456789abcdef"

// noPartOf fails when text holds 8 bytes or more of secret, in any case,
// or its hex.
func noPartOf(t *testing.T, text, secret string) {
	t.Helper()
	low := strings.ToLower(text)
	for i := 0; i+8 <= len(secret); i++ {
		require.NotContains(t, low, strings.ToLower(secret[i:i+8]), "%s", text)
	}
	require.NotContains(t, low, hex.EncodeToString([]byte(secret[:6])), "%s", text)
}

// TestUserInputNeverEchoesCredentials: a variable's value is echoed in its
// error, cut to 80 bytes, and must not show a credential: a malformed
// ANVIL_METRICS_URL's password (as a malformed ANVIL_BASE_URL's is not),
// and a malformed ANVIL_EXTRA_BODY or a trace row holding the API key,
// placed across the cut.
func TestUserInputNeverEchoesCredentials(t *testing.T) {
	t.Setenv("ANVIL_TEST_INPUT_KEY", inputKey)
	settingsOf := func(vars env) *settings {
		vars[envAPIKeyEnv] = "ANVIL_TEST_INPUT_KEY"
		return newSettings([]Option{WithEnvironment(vars.get)})
	}
	t.Run("metrics URL", func(t *testing.T) {
		const pass = "pw-METRICSPASS-77"
		for _, u := range []string{"http://ops:" + pass + "@gpu-box:9090:bad/metrics", "ftp://ops:" + pass + "@gpu-box/metrics", "http://ops:" + pass + "@[::1/metrics"} {
			_, err := settingsOf(env{envMetricsURL: u}).env()
			require.Error(t, err, u)
			require.ErrorContains(t, err, envMetricsURL)
			noPartOf(t, err.Error(), pass)
			noPartOf(t, err.Error(), base64.StdEncoding.EncodeToString([]byte("ops:"+pass)))
		}
	})
	t.Run("base URL", func(t *testing.T) {
		const pass = "pw-BASEPASS-1234"
		tg, err := settingsOf(env{envBaseURL: "http://ops:" + pass + "@gpu-box:80:80/v1"}).resolveTarget()
		require.NoError(t, err, "a free-form variable: the Target's validation judges it")
		_, err = tg.Resolved()
		require.Error(t, err)
		noPartOf(t, err.Error(), pass)
	})
	t.Run("extra body", func(t *testing.T) {
		for _, body := range []string{
			`{"model":"` + strings.Repeat("x", 60) + inputKey + `"`, // cut at 80 bytes inside the key
			`{"a":1}{"api_key":"` + inputKey + `"}`,
			`{"k":"` + hex.EncodeToString([]byte(inputKey)) + `",}`,
		} {
			_, err := settingsOf(env{envExtraBody: body}).env()
			require.Error(t, err, body)
			require.ErrorContains(t, err, envExtraBody)
			noPartOf(t, err.Error(), inputKey)
		}
	})
	t.Run("trace value", func(t *testing.T) {
		dir := t.TempDir()
		for name, row := range map[string]string{
			"raw.jsonl":     `{"offset_ms": 0, "prompt_tokens": "` + inputKey + `", "output_tokens": 1}`,
			"cut.jsonl":     `{"offset_ms": 0, "prompt_tokens": 9, "output_tokens": 1, "session": "` + strings.Repeat("s", 60) + inputKey + `", "turn": 0}`,
			"session.jsonl": `{"offset_ms": 0, "prompt_tokens": 9, "output_tokens": 1, "session": "` + inputKey + `", "turn": 1, "think_ms": 5}`,
		} {
			path := filepath.Join(dir, name)
			require.NoError(t, os.WriteFile(path, []byte(row+"\n"), 0o600))
			_, _, err := settingsOf(env{envTrace: path}).applyTraffic(capacity.Workload{Concurrency: 1})
			require.Error(t, err, name)
			require.ErrorContains(t, err, name)
			noPartOf(t, err.Error(), inputKey)
		}
	})
}

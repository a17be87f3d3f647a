package anviltest

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// terminalControl is the first character in out that a terminal acts on
// instead of showing (newline and tab aside); -1 when there is none.
func terminalControl(out string) rune {
	if !utf8.ValidString(out) {
		return utf8.RuneError
	}
	for _, r := range out {
		switch {
		case r == '\n', r == '\t':
		case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return r
		}
	}
	return -1
}

// TestServerTextIsLoggedSafely: a server whose model id and error bodies
// carry ESC[2J, NUL, a C1 CSI and a bidi override. Everything the
// benchmark logs or fails with (the outcome line, the first failure, the
// fatal error) shows them escaped; no raw control reaches the output.
func TestServerTextIsLoggedSafely(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child benchmarks")
	}
	const evil = "\x1b[2J\x00\u009b1m\u202e"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models":
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": []map[string]any{
				{"id": "model" + evil, "object": "model", "max_model_len": 32768},
			}})
		default:
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte("overloaded" + evil + "\r\n"))
		}
	}))
	defer srv.Close()
	stdout, err := childEnv(t, "engine", t.TempDir(), t.TempDir(),
		[]string{envBaseURL + "=" + srv.URL + "/v1", envEngine + "=e", envGPU + "=g"}, "-test.benchtime=2x")
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "the benchmark fails (no request succeeded): %v\n%s", err, stdout)
	require.Equal(t, rune(-1), terminalControl(stdout), "%q", stdout)
	require.Contains(t, stdout, `model\x1b[2J\x00\u009b1m\u202e: 2 requests, 0 succeeded, 2 failed`)
	require.Contains(t, stdout, `overloaded\x1b[2J`)
}

package capacity

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
)

// TestHeaderCredentialsNeverRecorded: credentials passed as Target.Headers
func TestHeaderCredentialsNeverRecorded(t *testing.T) {
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = fmt.Fprintf(w, "rejected: auth=%q key=%q team=%q token=%s",
			r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"), r.Header.Get("X-Team"), strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
	})
	synctest.Test(t, func(t *testing.T) {
		tg := pipeTarget(t, echo)
		tg.Headers = http.Header{"Authorization": {"Bearer sk-header-secret"}, "X-Api-Key": {"key-0123456789"}, "X-Team": {"bench"}}
		rep, err := Run(t.Context(), tg, Workload{Requests: 1, Concurrency: 1, ContextTokens: 512})
		require.NoError(t, err)
		require.Len(t, rep.Failures, 1)
		require.Equal(t, `HTTP 500 Internal Server Error: rejected: auth="[redacted]" key="[redacted]" team="[redacted]" token=[redacted]`, rep.Failures[0].ErrorMessage)
		b, err := json.Marshal(rep)
		require.NoError(t, err)
		require.NotContains(t, string(b), "sk-header-secret")
		require.NotContains(t, string(b), "key-0123456789")
	})
}

func TestSecretsOf(t *testing.T) {
	tg := Target{Headers: http.Header{
		"Authorization": {"Bearer tok-1"}, "Cookie": {"sid=abc"}, "X-Custom-Token": {"tok-1"}, "Accept-Language": {"en"},
	}}
	require.Equal(t, secrets{"Bearer tok-1", "sk-env-key", "sid=abc", "tok-1", "en"}, secretsOf(tg, "sk-env-key"))
	require.Equal(t, "a [redacted] b [redacted] [redacted]", secretsOf(tg, "").scrub("a Bearer tok-1 b sid=abc en"))
	tg = Target{BaseURL: "http://bench:p%40ss@h/v1"}
	require.Equal(t, secrets{"YmVuY2g6cEBzcw==", "bench:p%40ss", "bench:p@ss", "YmVuY2g6", "bench", "p@ss"}, secretsOf(tg, ""))
	require.Empty(t, secretsOf(Target{}, ""))
}

// TestScrubEscapedForms: a secret is removed raw and in every JSON-escaped
// spelling, mixed, escaped twice, and with either case of hex digits.
func TestScrubEscapedForms(t *testing.T) {
	s := secrets{"sk-a/b\"c"}
	for _, echo := range []string{
		`sk-a/b"c`,
		`sk\u002da\/b\"c`,
		`\u0073\u006B\u002D\u0061\u002F\u0062\u0022\u0063`,
		`sk\\u002da\\/b\\"c`,
	} {
		require.Equal(t, "<"+redactedMark+">", s.scrub("<"+echo+">"), echo)
	}
	require.Equal(t, `sk\u002ea/b"c`, s.scrub(`sk\u002ea/b"c`), "another character is not the secret")
	require.Equal(t, "sk-a/b", s.scrub("sk-a/b"), "a part is not replaced")
}

package capacity

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
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

// rawSecrets are the secrets of a list that are not base64 cores of
// another, the credentials as collected.
func rawSecrets(s secrets) secrets {
	cores := map[string]bool{}
	for _, v := range s {
		for _, c := range base64Cores(v) {
			cores[c] = true
		}
	}
	var raw secrets
	for _, v := range s {
		if !cores[v] {
			raw = append(raw, v)
		}
	}
	return raw
}

func TestSecretsOf(t *testing.T) {
	tg := Target{Headers: http.Header{
		"Authorization": {"Bearer tok-1"}, "Cookie": {"sid=abc"}, "X-Custom-Token": {"tok-1"}, "Accept-Language": {"en"},
	}}
	require.Equal(t, secrets{"Bearer tok-1", "sk-env-key", "sid=abc", "tok-1", "en"}, rawSecrets(secretsOf(tg, "sk-env-key")))
	require.Equal(t, "a [redacted] b [redacted] [redacted]", secretsOf(tg, "").scrub("a Bearer tok-1 b sid=abc en"))
	tg = Target{BaseURL: "http://bench:p%40ss@h/v1"}
	require.Equal(t, secrets{"YmVuY2g6cEBzcw==", "bench:p%40ss", "bench:p@ss", "YmVuY2g6", "bench", "p@ss"}, rawSecrets(secretsOf(tg, "")))
	// A Basic header is decoded: its pair, user and password are secrets.
	tg = Target{Headers: http.Header{"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte("ops:hunter2-pw"))}}}
	require.Equal(t, secrets{"Basic b3BzOmh1bnRlcjItcHc=", "b3BzOmh1bnRlcjItcHc=", "ops:hunter2-pw", "hunter2-pw", "b3BzOg==", "ops"}, rawSecrets(secretsOf(tg, "")))
	require.Empty(t, secretsOf(Target{}, ""))
}

// TestBase64Cores: the cores of a secret are found in the base64 of any
// text that holds it, at each of the three alignments, in both alphabets,
// padded or not; a secret shorter than minBase64Secret has none.
func TestBase64Cores(t *testing.T) {
	const key = "sk-live/key?~~>"
	s := secrets(base64Cores(key))
	for _, around := range []string{key, "Bearer " + key, "u:" + key, "x" + key + "yz"} {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
			text := enc.EncodeToString([]byte(around))
			require.Contains(t, s.scrub(text), redactedMark, "%q in %q", around, text)
		}
	}
	require.Empty(t, base64Cores("abcde"))
	require.Len(t, base64Cores("abcdef"), 6)
}

// TestScrubForms: each form a server trivially produces from a
// credential is scrubbed, one table row per form.
func TestScrubForms(t *testing.T) {
	const key = "sk-Live/Key+7f3a ü"
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("ops:hunter2-pw"))
	s := secretsOf(Target{Headers: http.Header{"Authorization": {basic}}}, key)
	for _, tc := range []struct{ form, echo string }{
		{"raw", key},
		{"json escaped", `sk\u002dLive\/Key+7f3a \u00fc`},
		{"json escaped twice", `sk\\u002dLive\\/Key+7f3a \\u00FC`},
		{"percent-encoded path", url.PathEscape(key)},
		{"percent-encoded query", url.QueryEscape(key)},
		{"percent-encoded lower-case hex", strings.ToLower(url.QueryEscape(key))},
		{"base64", base64.StdEncoding.EncodeToString([]byte(key))},
		{"base64 url, unpadded", base64.RawURLEncoding.EncodeToString([]byte(key))},
		{"base64 of the bearer header", base64.StdEncoding.EncodeToString([]byte("Bearer " + key))},
		{"decoded basic", "ops:hunter2-pw"},
		{"decoded basic password", "password hunter2-pw"},
		{"upper-cased", strings.ToUpper(key)},
		{"lower-cased", strings.ToLower(key)},
		{"upper-cased and percent-encoded", url.QueryEscape(strings.ToUpper(key))},
		{"upper-cased basic", strings.ToUpper("ops:hunter2-pw")},
	} {
		t.Run(tc.form, func(t *testing.T) {
			got := s.scrub("<" + tc.echo + ">")
			require.Contains(t, got, redactedMark)
			for _, part := range []string{"7f3a", "7F3A", "hunter2", "HUNTER2", "Live", "LIVE"} {
				require.NotContains(t, got, part, "from %q", tc.echo)
			}
		})
	}
	require.Equal(t, "sk-Live/Key+7f3b", s.scrub("sk-Live/Key+7f3b"), "another text is not the secret")
	// '%' and '\' spell themselves and start an escape: every way is tried.
	pct := secrets{`k%25\u-9`}
	for _, echo := range []string{`k%25\u-9`, url.QueryEscape(`k%25\u-9`), `k%2525%5Cu-9`, `k\u002525\\u-9`} {
		require.Equal(t, "<"+redactedMark+">", pct.scrub("<"+echo+">"), echo)
	}
	require.Equal(t, "%zz sk%2", s.scrub("%zz sk%2"), "a broken escape matches nothing")
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

package client

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/field"
)

// rawSecrets are the secrets of a list that are not base64 cores or the
// hex of another, the credentials as collected.
func rawSecrets(s Secrets) Secrets {
	cores := map[string]bool{}
	for _, v := range s {
		for _, c := range Base64Cores(v) {
			cores[c] = true
		}
		cores[hex.EncodeToString([]byte(v))] = true
	}
	var raw Secrets
	for _, v := range s {
		if !cores[v] {
			raw = append(raw, v)
		}
	}
	return raw
}

func TestSecretsOf(t *testing.T) {
	h := http.Header{
		"Authorization": {"Bearer tok-1"}, "Cookie": {"sid=abc"}, "X-Custom-Token": {"tok-1"}, "Accept-Language": {"en"},
	}
	require.Equal(t, Secrets{"Bearer tok-1", "sk-env-key", "sid=abc", "tok-1", "en"}, rawSecrets(SecretsOf("sk-env-key", h, "")))
	require.Equal(t, "a [redacted] b [redacted] [redacted]", SecretsOf("", h, "").Scrub("a Bearer tok-1 b sid=abc en"))
	require.Equal(t, Secrets{"YmVuY2g6cEBzcw==", "bench:p%40ss", "bench:p@ss", "YmVuY2g6", "bench", "p@ss"}, rawSecrets(SecretsOf("", nil, "http://bench:p%40ss@h/v1")))
	// A Basic header is decoded: its pair, user and password are secrets.
	h = http.Header{"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte("ops:hunter2-pw"))}}
	require.Equal(t, Secrets{"Basic b3BzOmh1bnRlcjItcHc=", "b3BzOmh1bnRlcjItcHc=", "ops:hunter2-pw", "hunter2-pw", "b3BzOg==", "ops"}, rawSecrets(SecretsOf("", h, "")))
	require.Empty(t, SecretsOf("", nil, ""))
}

// TestBase64Cores: the cores of a secret are found in the base64 of any
// text that holds it, at each of the three alignments, in both alphabets,
// padded or not; a secret shorter than minBase64Secret has none.
func TestBase64Cores(t *testing.T) {
	const key = "sk-live/key?~~>"
	s := Secrets(Base64Cores(key))
	for _, around := range []string{key, "Bearer " + key, "u:" + key, "x" + key + "yz"} {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
			text := enc.EncodeToString([]byte(around))
			require.Contains(t, s.Scrub(text), RedactedMark, "%q in %q", around, text)
		}
	}
	require.Empty(t, Base64Cores("abcde"))
	require.Len(t, Base64Cores("abcdef"), 6)
}

// TestScrubForms: each form a server trivially produces from a
// credential is scrubbed, one table row per form.
func TestScrubForms(t *testing.T) {
	const key = "sk-Live/Key+7f3a ü"
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("ops:hunter2-pw"))
	s := SecretsOf(key, http.Header{"Authorization": {basic}}, "")
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
		{"html references", html.EscapeString(`sk-Live/Key+7f3a ü`[:3]) + "&#76;&#x69;&#X56;e&#47;Key&#43;7f3a&#32;&#xFC;"},
		{"html escaped", "ops:" + html.EscapeString("hunter2-pw")},
	} {
		t.Run(tc.form, func(t *testing.T) {
			got := s.Scrub("<" + tc.echo + ">")
			require.Contains(t, got, RedactedMark)
			for _, part := range []string{"7f3a", "7F3A", "hunter2", "HUNTER2", "Live", "LIVE"} {
				require.NotContains(t, got, part, "from %q", tc.echo)
			}
		})
	}
	require.Equal(t, "sk-Live/Key+7f3b", s.Scrub("sk-Live/Key+7f3b"), "another text is not the secret")
	// '%' and '\' spell themselves and start an escape: every way is tried.
	pct := Secrets{`k%25\u-9`}
	for _, echo := range []string{`k%25\u-9`, url.QueryEscape(`k%25\u-9`), `k%2525%5Cu-9`, `k\u002525\\u-9`} {
		require.Equal(t, "<"+RedactedMark+">", pct.Scrub("<"+echo+">"), echo)
	}
	require.Equal(t, "%zz sk%2", s.Scrub("%zz sk%2"), "a broken escape matches nothing")
}

// TestScrubEscapedForms: a secret is removed raw and in every JSON-escaped
// spelling, mixed, escaped twice, and with either case of hex digits.
func TestScrubEscapedForms(t *testing.T) {
	s := Secrets{"sk-a/b\"c"}
	for _, echo := range []string{
		`sk-a/b"c`,
		`sk\u002da\/b\"c`,
		`\u0073\u006B\u002D\u0061\u002F\u0062\u0022\u0063`,
		`sk\\u002da\\/b\\"c`,
	} {
		require.Equal(t, "<"+RedactedMark+">", s.Scrub("<"+echo+">"), echo)
	}
	require.Equal(t, `sk\u002ea/b"c`, s.Scrub(`sk\u002ea/b"c`), "another character is not the secret")
	require.Equal(t, "sk-a/b", s.Scrub("sk-a/b"), "a part is not replaced")
}

// TestScrubHex: a credential a server echoes hex-encoded, in lower or
// upper case, alone or inside the hex of a longer text, is scrubbed.
func TestScrubHex(t *testing.T) {
	const key = "sk-HEXKEY-9f3a"
	s := SecretsOf(key, nil)
	for _, text := range []string{
		hex.EncodeToString([]byte(key)),
		strings.ToUpper(hex.EncodeToString([]byte(key))),
		"sig=" + hex.EncodeToString([]byte("Bearer "+key)) + ";",
		"0x" + strings.ToUpper(hex.EncodeToString([]byte("u:"+key+"!"))),
	} {
		got := s.Scrub(text)
		require.Contains(t, got, RedactedMark, text)
		require.NotContains(t, strings.ToLower(got), hex.EncodeToString([]byte("HEXKEY")), text)
	}
	require.Equal(t, "abcdef", SecretsOf("short", nil).Scrub("abcdef"), "no hex of a credential under 6 bytes")
}

// TestScrubSplitLines: a credential split over the data lines of one
// server-sent event (which the stream joins with a newline), raw, with
// CRLF, JSON-escaped once or twice, or quoted with its "data: " field, is
// scrubbed; a line break before or after it is left alone.
func TestScrubSplitLines(t *testing.T) {
	const key = "sk-SPLITKEY-77aa"
	s := SecretsOf(key, nil)
	for _, split := range []string{"\n", "\r\n", "\r", `\n`, `\r\n`, `\\n`, "\ndata: ", "\ndata:", `\ndata: `} {
		text := "bad chunk: " + key[:7] + split + key[7:] + " end"
		require.Equal(t, "bad chunk: [redacted] end", s.Scrub(text), "%q", split)
	}
	require.Equal(t, "a\n[redacted]\nb", s.Scrub("a\n"+key+"\nb"))
	require.Equal(t, "sk-SPL\n\nITKEY-77aa", s.Scrub("sk-SPL\n\nITKEY-77aa"), "one line break, not two")
}

// TestSecretsOfURLs: the userinfo of every URL of the run is a secret,
// read from the text: a metrics URL's, and one that does not parse.
func TestSecretsOfURLs(t *testing.T) {
	s := SecretsOf("", nil, "http://h/v1", "http://ops:pw-metrics1@gpu-box:9090:bad/metrics")
	require.Equal(t, "GET http://[redacted]@gpu-box:9090:bad/metrics: [redacted] refused", s.Scrub("GET http://ops:pw-metrics1@gpu-box:9090:bad/metrics: pw-metrics1 refused"))
	require.Equal(t, "[redacted]", s.Scrub(base64.StdEncoding.EncodeToString([]byte("ops:pw-metrics1"))), "the Basic form the transport sends")
	info, ok := userinfo("u%40x:p%3Ass@h:8000/v1?k=1")
	require.True(t, ok, "no scheme")
	require.Equal(t, "u%40x:p%3Ass", info)
	raw := rawSecrets(SecretsOf("", nil, "http://u%40x:p%3Ass@h/v1"))
	require.Subset(t, raw, Secrets{"u@x", "p:ss", "u@x:p:ss", "u%40x:p%3Ass"}, "decoded and as written")
	_, ok = userinfo("http://h/path@x")
	require.False(t, ok, "an @ in the path is no userinfo")
}

// TestRedactScrubsValuesBeforeCut: a bad value quoted in a *field.Error is
// scrubbed before its message cuts it: a key straddling the cut leaves no
// part, and the error wrapped afterwards shows none either.
func TestRedactScrubsValuesBeforeCut(t *testing.T) {
	const key = "sk-CUTKEY-0123456789abcdef"
	s := SecretsOf(key, nil)
	value := `{"model":"` + strings.Repeat("x", 60) + key + `"`
	fe := &field.Error{Pkg: "anviltest", Field: "ANVIL_EXTRA_BODY", Value: value, Rule: "want one JSON object"}
	require.Contains(t, fe.Error(), "sk-CUTKEY", "cut inside the key: the raw message holds a part of it")
	err := fmt.Errorf("reading the environment: %w", s.Redact(fe))
	require.NotContains(t, err.Error(), "CUTKEY")
	require.Contains(t, err.Error(), RedactedMark)
	var got *field.Error
	require.ErrorAs(t, err, &got, "it still is the field error")
	require.Equal(t, "ANVIL_EXTRA_BODY", got.Field)
}

// TestScrubDocumentedForms: every example of PROTOCOL.md's table of the
// forms of a credential ("| form | example for `sk-a/b` |"), each a code
// span, is scrubbed whole; a key split over lines is the one example in
// words ("`sk-a` + newline + `/b`").
func TestScrubDocumentedForms(t *testing.T) {
	doc, err := os.ReadFile("../../PROTOCOL.md")
	require.NoError(t, err)
	_, table, ok := strings.Cut(string(doc), "| form | example for `sk-a/b` |\n|---|---|\n")
	require.True(t, ok, "PROTOCOL.md lists the forms of a credential")
	table, _, _ = strings.Cut(table, "\n\n")
	s := SecretsOf("sk-a/b", nil)
	rows := 0
	for row := range strings.Lines(table) {
		cells := strings.Split(strings.TrimSpace(row), " | ")
		example := strings.TrimSuffix(cells[len(cells)-1], " |")
		var echoes []string
		if a, b, split := strings.Cut(example, " + newline + "); split {
			echoes = []string{strings.Trim(a, "`") + "\n" + strings.Trim(b, "`"), strings.Trim(a, "`") + "\ndata: " + strings.Trim(b, "`")}
		} else {
			for span := range strings.SplitSeq(example, ", ") {
				require.True(t, strings.HasPrefix(span, "`") && strings.HasSuffix(span, "`"), "row %q: examples are code spans", row)
				echoes = append(echoes, strings.Trim(span, "`"))
			}
		}
		for _, echo := range echoes {
			require.Equal(t, "<"+RedactedMark+">", s.Scrub("<"+echo+">"), "row %q: %q", row, echo)
		}
		rows++
	}
	require.GreaterOrEqual(t, rows, 8, "the table's rows:\n%s", table)
}

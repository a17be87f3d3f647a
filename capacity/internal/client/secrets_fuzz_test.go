package client

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// secretForms are the spellings of a credential a server trivially
// produces, each of which scrub must remove.
var secretForms = []func(string) string{
	func(s string) string { return s },
	strings.ToUpper,
	strings.ToLower,
	url.QueryEscape,
	url.PathEscape,
	func(s string) string { return url.QueryEscape(strings.ToUpper(s)) },
	func(s string) string {
		var b strings.Builder
		for _, r := range s {
			fmt.Fprintf(&b, `\u%04X`, r)
		}
		return b.String()
	},
	func(s string) string { b, _ := json.Marshal(s); return string(b[1 : len(b)-1]) },
	func(s string) string {
		b, _ := json.Marshal(strings.ToUpper(s))
		b, _ = json.Marshal(string(b))
		return string(b[1 : len(b)-1])
	},
	func(s string) string { // over two data lines of one event, joined
		i := len(s) / 2
		for !utf8.RuneStart(s[i]) {
			i--
		}
		return s[:i] + "\n" + s[i:]
	},
	func(s string) string { // HTML character references, decimal and hexadecimal by turns
		var b strings.Builder
		for i, r := range []rune(s) {
			if i%2 == 0 {
				fmt.Fprintf(&b, "&#%d;", r)
			} else {
				fmt.Fprintf(&b, "&#x%X;", r)
			}
		}
		return b.String()
	},
	func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
	func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte("Bearer " + s)) },
	func(s string) string { return hex.EncodeToString([]byte(s)) },
	func(s string) string { return strings.ToUpper(hex.EncodeToString([]byte("Bearer " + s))) },
}

// firstBase64Form and firstHexForm are the indexes of the first base64
// and hex spellings in secretForms, which credentials under
// minBase64Secret do not have.
const (
	firstBase64Form = 11
	firstHexForm    = 13
)

// FuzzScrub: a credential written in any of secretForms anywhere in any
// text is gone after scrub: no spelling of it is left once the marks are
// taken out (a base64 form leaves at most its partial edge characters).
func FuzzScrub(f *testing.F) {
	f.Add("error: key=", "sk-live-7f3a", uint8(0), uint16(11))
	f.Add(`{"message":"bad"}`, "Bearer tok/1+2", uint8(6), uint16(12))
	f.Add("302 Location: http://h/login/", "p@ss wörd", uint8(4), uint16(30))
	f.Add("x", "ıi-İ", uint8(1), uint16(0))
	f.Fuzz(func(t *testing.T, text, key string, form uint8, at uint16) {
		if !utf8.ValidString(key) || !utf8.ValidString(text) || strings.TrimSpace(key) != key || len(key) < 4 ||
			strings.ContainsAny(key, "[]") || strings.IndexFunc(key, func(r rune) bool { return r > 0xFFFF || unicode.IsControl(r) }) >= 0 {
			// (HTTP refuses a credential with a control character.)
			return
		}
		f := int(form) % len(secretForms)
		if f >= firstBase64Form && len(key) < minBase64Secret {
			return
		}
		spelled := secretForms[f](key)
		pos := int(at) % (len(text) + 1)
		for pos > 0 && !utf8.RuneStart(text[pos%len(text)]) {
			pos--
		}
		in := text[:pos] + spelled + text[pos:]
		out := SecretsOf(key, nil, "").Scrub(in)
		rest := strings.ToLower(strings.ReplaceAll(out, RedactedMark, "\x00"))
		if f >= firstBase64Form && f < firstHexForm { // base64: the core of the spelling is gone
			if core := strings.ToLower(spelled[2 : len(spelled)-3]); strings.Contains(rest, core) && !strings.Contains(strings.ToLower(in[:pos]+in[pos+len(spelled):]), core) {
				t.Fatalf("form %d of %q survives in %q", f, key, out)
			}
			return
		}
		if strings.Contains(rest, strings.ToLower(spelled)) && !strings.Contains(strings.ToLower(text), strings.ToLower(spelled)) {
			t.Fatalf("form %d %q of %q survives in %q", f, spelled, key, out)
		}
	})
}

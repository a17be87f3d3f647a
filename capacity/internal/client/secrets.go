package client

import (
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/anvilbench/anvil/capacity/internal/field"
)

// Secrets are the credentials a run knows, longest first: none of them may
// reach a report, an error, a log line or the terminal, whatever a server
// echoes them through.
//
// Secrets.Scrub is the one rule for every string a server or a user's
// input supplies: every failure message is scrubbed as a whole by
// Exchange.fail before it is cut, finish reasons and the probed model id
// before they enter the report, the server's metric labels before they
// are kept, and every error Run returns through Secrets.Redact (a bad
// value's text scrubbed before its message cuts it).
type Secrets []string

// RedactedMark replaces a credential in a message.
const RedactedMark = "[redacted]"

// minBase64Secret is the shortest credential whose base64 and hex
// spellings are scrubbed too: the encoding of a shorter one is a few
// characters that ordinary text holds by chance.
const minBase64Secret = 6

// SecretsOf collects every credential of a run: apiKey, the bearer token
// read from Target.APIKeyEnv; the value of every header entry (Target.Headers),
// whatever its name (for a value such as "Bearer sk-..." also the part
// after the scheme, and for a "Basic ..." value its decoded
// "user:password", user and password); the userinfo of each of urls (the
// base URL, the metrics URL: user, password, "user:pass" and its Basic
// base64 form, which the transport sends), read from the text, so that
// a URL that does not parse gives its password too; and, for each of
// them of at least minBase64Secret bytes, its hex (either case matches)
// and the base64 of any text holding it (see Base64Cores).
func SecretsOf(apiKey string, header http.Header, urls ...string) Secrets {
	var s Secrets
	add := func(v string) {
		if v = strings.TrimSpace(v); v != "" {
			s = append(s, v)
		}
	}
	addPair := func(user, pass string) {
		add(user)
		add(pass)
		pair := user + ":" + pass
		add(pair)
		add(base64.StdEncoding.EncodeToString([]byte(pair)))
		add(base64.StdEncoding.EncodeToString([]byte(user + ":")))
	}
	add(apiKey)
	for _, values := range header {
		for _, v := range values {
			add(v)
			scheme, cred, ok := strings.Cut(strings.TrimSpace(v), " ")
			if !ok {
				continue
			}
			add(cred)
			if strings.EqualFold(scheme, "Basic") {
				if dec, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred)); err == nil {
					user, pass, _ := strings.Cut(string(dec), ":")
					addPair(user, pass)
				}
			}
		}
	}
	for _, raw := range urls {
		info, ok := userinfo(raw)
		if !ok {
			continue
		}
		add(info) // the percent-encoded form as written
		user, pass, _ := strings.Cut(info, ":")
		addPair(unescaped(user), unescaped(pass))
	}
	for _, v := range slices.Clone(s) {
		s = append(s, Base64Cores(v)...)
		if len(v) >= minBase64Secret {
			s = append(s, hex.EncodeToString([]byte(v)))
		}
	}
	// Longest first, so a whole value is replaced before a part of it;
	// equal values end up side by side and are kept once.
	slices.SortFunc(s, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	return slices.Compact(s)
}

// userinfo returns the userinfo of the URL raw as written (percent-encoded),
// found in the text as a URL parser would find it, so that a URL that
// does not parse still gives it: what comes before the last '@' between
// "scheme://" (optional) and the first '/', '?' or '#'.
func userinfo(raw string) (string, bool) {
	rest := strings.TrimSpace(raw)
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	if end := strings.IndexAny(rest, "/?#"); end >= 0 {
		rest = rest[:end]
	}
	at := strings.LastIndex(rest, "@")
	if at <= 0 {
		return "", false
	}
	return rest[:at], true
}

// unescaped is s percent-decoded, or s when it is no valid encoding.
func unescaped(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

// Base64Cores returns the spellings of v inside any base64 text, standard
// and URL alphabets: base64 writes 3 bytes as 4 characters, so v encoded
// after 0, 1 or 2 other bytes gives three different texts. Of each, the
// characters that depend on v's bits alone (not on the bytes around it)
// are a fixed string whatever surrounds v: the core. Matching the cores
// finds v in the base64 of v itself, of "user:"+v, of "Bearer "+v, padded
// or not. None for v shorter than minBase64Secret.
func Base64Cores(v string) []string {
	if len(v) < minBase64Secret {
		return nil
	}
	var cores []string
	for lead := range 3 {
		buf := make([]byte, lead, lead+len(v))
		enc := base64.RawStdEncoding.EncodeToString(append(buf, v...))
		// Character i holds bits [6i, 6i+6); v's bits are
		// [8*lead, 8*(lead+len(v))).
		from := (8*lead + 5) / 6
		to := 8 * (lead + len(v)) / 6
		core := enc[from:to]
		cores = append(cores, core, strings.NewReplacer("+", "-", "/", "_").Replace(core))
	}
	return cores
}

// Scrub replaces every secret in text by [redacted]. Each character of a
// secret matches:
//   - itself, or the same letter in another case (unicode simple folding:
//     a key upper-cased or lower-cased by the server);
//   - its JSON escapes: \uXXXX (either case of hex digits), '/', '"' and
//     '\\' written with a backslash, and the same escapes escaped again (a JSON
//     string quoted in a JSON string: \\u002d, \\/);
//   - its percent-encoding, each UTF-8 byte as %XX (either case of hex
//     digits), and '+' for a space (a URL's query);
//   - its HTML character reference, decimal (&#43;), hexadecimal (&#x2b;,
//     either case) or named (&amp;, &lt;, &gt;, &quot;, &apos;): a key
//     quoted in an HTML error page.
//
// Between two characters of a secret there may be a line break (\n,
// \r\n or \r, raw or JSON-escaped), with "data:" and a space after it: a
// key split over the data lines of one server-sent event, which the
// stream joins with a newline.
//
// Any mix of these spells the secret, so a key in a redirect's Location,
// upper-cased in an error or escaped in a JSON body is found; its base64
// and hex spellings are secrets of their own (SecretsOf).
func (s Secrets) Scrub(text string) string {
	if len(s) == 0 || text == "" {
		return text
	}
	var (
		b    strings.Builder
		last int
	)
	for i := 0; i < len(text); {
		n := 0
		for _, v := range s {
			if n = matchSecret(text[i:], v); n > 0 {
				break
			}
		}
		if n == 0 {
			i++
			continue
		}
		b.WriteString(text[last:i])
		b.WriteString(RedactedMark)
		i += n
		last = i
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// matchSecret returns the length of the longest prefix of text that spells
// v, each of v's characters in any form scrub describes; 0 when text does
// not start with v. A character may match in more than one way ('%' raw or
// as %25, '\\' raw or as \\u005c), so the match follows every way at once:
// the set of text offsets reachable after each character, at most
// maxMatchPaths of them (more than a real credential's escapes make).
func matchSecret(text, v string) int {
	var bufA, bufB [maxMatchPaths]int
	ends, next := bufA[:1], bufB[:0]
	add := func(at int) {
		if len(next) < maxMatchPaths && !slices.Contains(next, at) {
			next = append(next, at)
		}
	}
	for k, r := range v {
		next = next[:0]
		for _, j := range ends {
			for _, n := range matchRune(text[j:], r) {
				if n > 0 {
					add(j + n)
				}
			}
		}
		if len(next) == 0 {
			return 0
		}
		if k+utf8.RuneLen(r) < len(v) { // a line break may follow, not end, the secret
			for _, j := range slices.Clone(next) {
				if n := lineBreak(text[j:]); n > 0 {
					add(j + n)
				}
			}
		}
		ends, next = next, ends
	}
	return slices.Max(ends)
}

// lineBreaks are the line breaks a secret may be split by, longest first:
// JSON-escaped twice (a JSON string quoted in a JSON string) or once, and
// raw.
var lineBreaks = []string{"\\\\r\\\\n", "\\\\n", "\\\\r", "\\r\\n", "\\n", "\\r", "\r\n", "\n", "\r"}

// sseData follows a line break of a server-sent event's data, the next
// line's field name.
const sseData = "data:"

// lineBreak returns the length of the line break text starts with, with
// the "data:" and the space of the next data line after it, or 0.
func lineBreak(text string) int {
	for _, b := range lineBreaks {
		if !strings.HasPrefix(text, b) {
			continue
		}
		n := len(b)
		if strings.HasPrefix(text[n:], sseData) {
			n += len(sseData)
			if strings.HasPrefix(text[n:], " ") {
				n++
			}
		}
		return n
	}
	return 0
}

// maxMatchPaths bounds the ways matchSecret follows at once.
const maxMatchPaths = 16

// matchRune matches one character of a secret at the start of text and
// returns the bytes each way of spelling it spans (raw, a JSON escape,
// percent-encoded, a backslash escaped once or twice, an HTML character
// reference), 0 for a way that does not match.
func matchRune(text string, r rune) [6]int {
	var m [6]int
	if c, size := utf8.DecodeRuneInString(text); size > 0 && (r != utf8.RuneError || size > 1) && sameLetter(c, r) {
		m[0] = size
	}
	m[1] = matchJSONEscape(text, r)
	m[2] = matchPercent(text, r)
	m[5] = matchHTMLReference(text, r)
	if r == '\\' { // a backslash escaped once, or twice
		if strings.HasPrefix(text, `\\`) {
			m[3] = 2
		}
		if strings.HasPrefix(text, `\\\\`) {
			m[4] = 4
		}
	}
	return m
}

// sameLetter reports whether a and b are one character, or one letter in
// two cases.
func sameLetter(a, b rune) bool {
	if a == b {
		return true
	}
	if a < utf8.RuneSelf && b < utf8.RuneSelf {
		return 'a' <= a|0x20 && a|0x20 <= 'z' && a|0x20 == b|0x20
	}
	if unicode.ToUpper(a) == unicode.ToUpper(b) || unicode.ToLower(a) == unicode.ToLower(b) {
		return true // also the letters simple folding leaves apart: strings.ToUpper("ı") is "I"
	}
	for f := unicode.SimpleFold(a); f != a; f = unicode.SimpleFold(f) {
		if f == b {
			return true
		}
	}
	return false
}

// matchJSONEscape matches r written as a JSON escape, once or twice
// escaped.
func matchJSONEscape(text string, r rune) int {
	// One or two levels of escaping: \X once; escaped again, the backslash
	// is escaped too (\\X, and \\\X for a '/' or '"' whose own escape is
	// escaped: a JSON string quoted in a JSON string).
	slashes := 0
	for slashes < len(text) && slashes < 4 && text[slashes] == '\\' {
		slashes++
	}
	if slashes == 0 || slashes == 4 {
		return 0
	}
	rest := text[slashes:]
	if (r == '/' || r == '"') && strings.HasPrefix(rest, string(r)) {
		return slashes + 1
	}
	if slashes < 3 && len(rest) >= 5 && rest[0] == 'u' && r <= 0xFFFF {
		var v rune
		for _, h := range rest[1:5] {
			d := hexDigit(h)
			if d < 0 {
				return 0
			}
			v = v<<4 | rune(d)
		}
		if sameLetter(v, r) {
			return slashes + 5
		}
	}
	return 0
}

// matchPercent matches r percent-encoded: each byte of its UTF-8 form (or
// of the same letter in another case) as %XX, or '+' for a space.
func matchPercent(text string, r rune) int {
	if r == ' ' && strings.HasPrefix(text, "+") {
		return 1
	}
	var buf [utf8.UTFMax]byte
	n, j := 0, 0
	for n < len(buf) && j+3 <= len(text) && text[j] == '%' {
		hi, lo := hexDigit(rune(text[j+1])), hexDigit(rune(text[j+2]))
		if hi < 0 || lo < 0 {
			break
		}
		buf[n] = byte(hi<<4 | lo)
		n++
		j += 3
		if utf8.FullRune(buf[:n]) {
			c, size := utf8.DecodeRune(buf[:n])
			if size == n && c != utf8.RuneError && sameLetter(c, r) {
				return j
			}
			return 0
		}
	}
	return 0
}

// htmlNamed are the named character references an HTML escaper writes
// (html.EscapeString, html/template, an HTML error page): the characters
// of a credential it changes.
var htmlNamed = map[string]rune{"amp": '&', "lt": '<', "gt": '>', "quot": '"', "apos": '\''}

// matchHTMLReference matches r written as an HTML character reference:
// decimal (&#43;), hexadecimal in either case (&#x2B;) or one of
// htmlNamed (&amp;), ended by ';'.
func matchHTMLReference(text string, r rune) int {
	if len(text) < 4 || text[0] != '&' {
		return 0
	}
	end := strings.IndexByte(text[:min(len(text), 12)], ';')
	if end < 0 {
		return 0
	}
	ref := text[1:end]
	var v rune
	switch {
	case len(ref) > 2 && (ref[:2] == "#x" || ref[:2] == "#X"):
		for _, h := range ref[2:] {
			d := hexDigit(h)
			if d < 0 {
				return 0
			}
			v = v<<4 | rune(d)
		}
	case len(ref) > 1 && ref[0] == '#':
		for _, c := range ref[1:] {
			if c < '0' || c > '9' {
				return 0
			}
			v = v*10 + c - '0'
		}
	default:
		var ok bool
		if v, ok = htmlNamed[ref]; !ok {
			return 0
		}
	}
	if !sameLetter(v, r) {
		return 0
	}
	return end + 1
}

func hexDigit(c rune) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// redactedError is an error Secrets.Redact returned: its text is scrubbed
// of the run's credentials, and it still matches what it wraps with
// errors.Is and errors.As (ErrInvalidConfig, ErrEndpointRefused, a
// *FieldError).
type redactedError struct {
	err error
	msg string
}

var _ error = (*redactedError)(nil)

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// Redact scrubs err's message; nil stays nil and an error that holds no
// secret is returned unchanged. The text value of every *field.Error in
// err (a variable's value, a trace's row) is scrubbed in place first, so
// that its message, which cuts a long value, never shows part of a
// credential: redact a field error before wrapping it (a wrapping error
// keeps the message it was made with).
func (s Secrets) Redact(err error) error {
	if err == nil {
		return nil
	}
	if len(s) > 0 {
		field.Each(err, func(e *field.Error) {
			if v := reflect.ValueOf(e.Value); v.Kind() == reflect.String {
				if clean := s.Scrub(v.String()); clean != v.String() {
					e.Value = clean
				}
			}
		})
	}
	msg := err.Error()
	clean := s.Scrub(msg)
	if clean == msg {
		return err
	}
	return &redactedError{err: err, msg: clean}
}

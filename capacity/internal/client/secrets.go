package client

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Secrets are the credentials a run knows, longest first: none of them may
// reach a report, an error, a log line or the terminal, whatever a server
// echoes them through.
//
// Secrets.Scrub is the one chokepoint for server-provided text: every
// failure message is scrubbed as a whole by Exchange.fail before it is
// cut, finish reasons and the probed model id before they enter the
// report, and every error Run returns through Secrets.Redact.
type Secrets []string

// RedactedMark replaces a credential in a message.
const RedactedMark = "[redacted]"

// minBase64Secret is the shortest credential whose base64 spellings are
// scrubbed too: the base64 of a shorter one is a few characters that
// ordinary text holds by chance.
const minBase64Secret = 6

// SecretsOf collects every credential of a run: apiKey, the bearer token
// read from Target.APIKeyEnv; the value of every header entry (Target.Headers),
// whatever its name (for a value such as "Bearer sk-..." also the part
// after the scheme, and for a "Basic ..." value its decoded
// "user:password", user and password); the userinfo of baseURL (user,
// password, "user:pass" and its Basic base64 form, which the transport
// sends); and the base64 of each of them of at least minBase64Secret bytes
// (see Base64Cores).
func SecretsOf(apiKey string, header http.Header, baseURL string) Secrets {
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
	if u, err := url.Parse(strings.TrimSpace(baseURL)); err == nil && u.User != nil {
		pass, _ := u.User.Password()
		add(u.User.String()) // the percent-encoded form as written
		addPair(u.User.Username(), pass)
	}
	for _, v := range slices.Clone(s) {
		s = append(s, Base64Cores(v)...)
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
//     digits), and '+' for a space (a URL's query).
//
// Any mix of these spells the secret, so a key in a redirect's Location,
// upper-cased in an error or escaped in a JSON body is found; its base64
// spellings are secrets of their own (SecretsOf).
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
	for _, r := range v {
		next = next[:0]
		for _, j := range ends {
			for _, n := range matchRune(text[j:], r) {
				if n > 0 && len(next) < maxMatchPaths && !slices.Contains(next, j+n) {
					next = append(next, j+n)
				}
			}
		}
		if len(next) == 0 {
			return 0
		}
		ends, next = next, ends
	}
	return slices.Max(ends)
}

// maxMatchPaths bounds the ways matchSecret follows at once.
const maxMatchPaths = 16

// matchRune matches one character of a secret at the start of text and
// returns the bytes each way of spelling it spans (raw, a JSON escape,
// percent-encoded, a backslash escaped once or twice), 0 for a way that
// does not match.
func matchRune(text string, r rune) [5]int {
	var m [5]int
	if c, size := utf8.DecodeRuneInString(text); size > 0 && (r != utf8.RuneError || size > 1) && sameLetter(c, r) {
		m[0] = size
	}
	m[1] = matchJSONEscape(text, r)
	m[2] = matchPercent(text, r)
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
// secret is returned unchanged.
func (s Secrets) Redact(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := s.Scrub(msg)
	if clean == msg {
		return err
	}
	return &redactedError{err: err, msg: clean}
}

package capacity

import (
	"encoding/base64"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
)

// secrets are the credentials a run knows, longest first: none of them may
// reach a report, an error, a log line or the terminal, whatever a server
// echoes them through.
//
// secrets.scrub is the one chokepoint for server-provided text: every
// failure message is scrubbed as a whole by exchange.fail before it is cut,
// finish reasons and the probed model id before they enter the report, and
// every error Run returns through redactedError.
type secrets []string

// redactedMark replaces a credential in a message.
const redactedMark = "[redacted]"

// secretsOf collects every credential of a run: the bearer token read from
// Target.APIKeyEnv; the value of every Target.Headers entry, whatever its
// name (for a value such as "Bearer sk-..." also the part after the
// scheme); and the userinfo of Target.BaseURL (user, password, "user:pass"
// and its Basic base64 form, which the transport sends).
func secretsOf(t Target, apiKey string) secrets {
	var s secrets
	add := func(v string) {
		if v = strings.TrimSpace(v); v != "" {
			s = append(s, v)
		}
	}
	add(apiKey)
	for _, values := range t.Headers {
		for _, v := range values {
			add(v)
			if _, cred, ok := strings.Cut(strings.TrimSpace(v), " "); ok {
				add(cred)
			}
		}
	}
	if u, err := url.Parse(strings.TrimSpace(t.BaseURL)); err == nil && u.User != nil {
		user := u.User.Username()
		pass, _ := u.User.Password()
		add(user)
		add(pass)
		add(u.User.String()) // the percent-encoded form as written
		pair := user + ":" + pass
		add(pair)
		add(base64.StdEncoding.EncodeToString([]byte(pair)))
		add(base64.StdEncoding.EncodeToString([]byte(user + ":")))
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

// Redactor returns the scrubber Run applies to every server-provided
// string, for the credentials of t: apiKey (the bearer token the caller
// read from t.APIKeyEnv; empty for none), the value of every t.Headers
// entry whatever its name, and the userinfo of t.BaseURL with its Basic
// form, each raw and JSON-escaped, replaced by "[redacted]". A tool that
// talks to the target itself (the conformance suite of package anviltest)
// passes what it prints through it, whole, before cutting it.
func (t Target) Redactor(apiKey string) func(text string) string {
	return secretsOf(t, apiKey).scrub
}

// scrub replaces every secret in text by [redacted], in its raw form and in
// every JSON-escaped form a server may echo it in: any of its characters
// written as \uXXXX (either case of hex digits), '/' and '"' written with a
// backslash, and the same escapes escaped again (a JSON string quoted in a
// JSON string: \\u002d, \\/).
func (s secrets) scrub(text string) string {
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
		b.WriteString(redactedMark)
		i += n
		last = i
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// matchSecret returns the length of the prefix of text that spells v, each
// of v's characters raw or escaped as scrub describes; 0 when text does not
// start with v.
func matchSecret(text, v string) int {
	j := 0
	for _, r := range v {
		n := matchRune(text[j:], r)
		if n == 0 {
			return 0
		}
		j += n
	}
	return j
}

// matchRune matches one character of a secret at the start of text.
func matchRune(text string, r rune) int {
	if c, size := utf8.DecodeRuneInString(text); size > 0 && c == r && (r != utf8.RuneError || size > 1) {
		return size
	}
	// One or two levels of escaping: a backslash, or an escaped backslash.
	slashes := 0
	for slashes < len(text) && slashes < 3 && text[slashes] == '\\' {
		slashes++
	}
	if slashes != 1 && slashes != 2 {
		return 0
	}
	rest := text[slashes:]
	if (r == '/' || r == '"') && strings.HasPrefix(rest, string(r)) {
		return slashes + 1
	}
	if len(rest) >= 5 && rest[0] == 'u' && r <= 0xFFFF {
		var v rune
		for _, h := range rest[1:5] {
			d := hexDigit(h)
			if d < 0 {
				return 0
			}
			v = v<<4 | rune(d)
		}
		if v == r {
			return slashes + 5
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

// redactedError is an error returned by Run: its text is scrubbed of the
// run's credentials, and it still matches what it wraps with errors.Is and
// errors.As (ErrInvalidConfig, ErrEndpointRefused, a *ConfigError).
type redactedError struct {
	err error
	msg string
}

var _ error = (*redactedError)(nil)

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redactErr scrubs err's message; nil stays nil and an error that holds no
// secret is returned unchanged.
func (s secrets) redactErr(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := s.scrub(msg)
	if clean == msg {
		return err
	}
	return &redactedError{err: err, msg: clean}
}

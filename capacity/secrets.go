package capacity

import (
	"slices"
	"strings"
)

// secrets are the credentials a run sends, longest first: none of them may
// reach a report, an error or a log, even when a server echoes them.
type secrets []string

// credentialHeaderWords mark the Target.Headers whose values are
// credentials: any header whose name holds one of them, case-insensitively
// (Authorization, Proxy-Authorization, X-Api-Key, Cookie, ...).
var credentialHeaderWords = [...]string{"auth", "key", "token", "secret", "cookie", "password"}

// secretsOf collects the bearer token read from Target.APIKeyEnv and the
// values of the credential headers of t.Headers (for a value such as
// "Bearer sk-...", also the credential after the scheme).
func secretsOf(t Target, apiKey string) secrets {
	var s secrets
	add := func(v string) {
		if v = strings.TrimSpace(v); v != "" {
			s = append(s, v)
		}
	}
	add(apiKey)
	for name, values := range t.Headers {
		lower := strings.ToLower(name)
		if !slices.ContainsFunc(credentialHeaderWords[:], func(w string) bool { return strings.Contains(lower, w) }) {
			continue
		}
		for _, v := range values {
			add(v)
			if _, cred, ok := strings.Cut(strings.TrimSpace(v), " "); ok {
				add(cred)
			}
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

// scrub replaces every secret in text by [redacted].
func (s secrets) scrub(text string) string {
	for _, v := range s {
		text = strings.ReplaceAll(text, v, "[redacted]")
	}
	return text
}

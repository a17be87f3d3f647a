package client

import "strings"

// DisplayURL shows a URL (a base URL, a metrics endpoint) in an error
// as the user wrote it, without what may be a credential: the userinfo
// is dropped, and every query and fragment value is replaced by
// RedactedMark (the names stay, so the user sees what to remove). It
// works on the text, so it also shows URLs that do not parse.
func DisplayURL(raw string) string {
	prefix, rest := "", raw
	if i := strings.Index(raw, "://"); i >= 0 {
		prefix, rest = raw[:i+3], raw[i+3:]
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
		rest = rest[at+1:]
	}
	redactPairs := func(s string) string {
		pairs := strings.Split(s, "&")
		for i, p := range pairs {
			if name, _, ok := strings.Cut(p, "="); ok {
				pairs[i] = name + "=" + RedactedMark
			} else if p != "" {
				pairs[i] = RedactedMark
			}
		}
		return strings.Join(pairs, "&")
	}
	path, frag, hasFrag := strings.Cut(rest, "#")
	path, query, hasQuery := strings.Cut(path, "?")
	out := prefix + path
	if hasQuery {
		out += "?" + redactPairs(query)
	}
	if hasFrag {
		out += "#" + redactPairs(frag)
	}
	return out
}

package anviltest

import (
	"strings"
)

// withEnvNames follows each configuration field that s names and a
// variable sets (Target.BaseURL, Target.MaxModelLen, Workload.Timeout,
// ...; envVars) by that variable's name, "Target.Model (ANVIL_MODEL)", so
// a message of package capacity, which speaks of the fields, also says
// what a benchmark's user sets. A field already followed by its
// variable, or by "comes from" (explainFields), is left alone, and a
// longer name (Workload.Shard.StartAt) is never taken for a shorter one.
func withEnvNames(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		name, field := fieldAt(s, i)
		if field == "" {
			b.WriteByte(s[i])
			i++
			continue
		}
		b.WriteString(field)
		i += len(field)
		if rest := s[i:]; !strings.HasPrefix(rest, " ("+name+")") && !strings.HasPrefix(rest, " comes from ") {
			b.WriteString(" (" + name + ")")
		}
	}
	return b.String()
}

// fieldAt returns the variable and the field of envVars named at s[i:],
// the longest such field that ends there at a word's end; "", "" when
// none.
func fieldAt(s string, i int) (name, field string) {
	if !strings.HasPrefix(s[i:], "Target.") && !strings.HasPrefix(s[i:], "Workload.") {
		return "", ""
	}
	if i > 0 && (isWordByte(s[i-1]) || s[i-1] == '.') {
		return "", ""
	}
	for _, v := range envVars {
		f := v.field
		if f == "" || len(f) <= len(field) || !strings.HasPrefix(s[i:], f) {
			continue
		}
		if end := i + len(f); end < len(s) && (isWordByte(s[end]) || s[end] == '.' && end+1 < len(s) && isWordByte(s[end+1])) {
			continue
		}
		if v.name == envShard || v.name == envShards { // Workload.Shard: either one's; explainFields says which
			continue
		}
		name, field = v.name, f
	}
	return name, field
}

// isWordByte reports whether c may be part of a Go identifier.
func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

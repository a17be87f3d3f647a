package artifact

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// A splitter for JSON already validated once (UnmarshalJSON checks the whole
// document with json.Valid first). It finds the members of an object and
// the elements of an array without decoding them, so each byte of a large
// artifact is scanned a small constant number of times instead of once per
// nesting level, and values stay sub-slices of the input.

// member is one key and its raw value.
type member struct {
	key string
	val json.RawMessage
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"'
// and whether it contains an escape.
func skipString(b []byte, i int) (int, bool) {
	escaped := false
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			escaped = true
			i++
		case '"':
			return i + 1, escaped
		}
	}
	return len(b), escaped
}

// skipValue returns the index after the value starting at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		end, _ := skipString(b, i)
		return end
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i, _ = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(b)
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' &&
		b[i] != '\n' && b[i] != '\t' && b[i] != '\r' {
		i++
	}
	return i
}

// decodeString decodes the JSON string literal s. Literals without escapes
// and with valid UTF-8 are sliced directly; the rest go through
// encoding/json (which also replaces invalid UTF-8 with U+FFFD).
func decodeString(s []byte, escaped bool) (string, bool) {
	inner := s[1 : len(s)-1]
	if !escaped && utf8.Valid(inner) {
		return string(inner), true
	}
	var v string
	if json.Unmarshal(s, &v) != nil {
		return "", false
	}
	return v, true
}

// splitObject returns the members of the valid JSON object raw.
func splitObject(raw []byte) []member {
	raw = bytes.TrimSpace(raw)
	ms := make([]member, 0, 16)
	i := skipSpace(raw, 1)
	for i < len(raw) && raw[i] == '"' {
		end, escaped := skipString(raw, i)
		key, _ := decodeString(raw[i:end], escaped)
		i = skipSpace(raw, end)
		i = skipSpace(raw, i+1) // ':'
		vend := skipValue(raw, i)
		ms = append(ms, member{key, raw[i:vend]})
		i = skipSpace(raw, vend)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return ms
}

// splitArray returns the elements of the valid JSON array raw.
func splitArray(raw []byte) []json.RawMessage {
	raw = bytes.TrimSpace(raw)
	var items []json.RawMessage
	i := skipSpace(raw, 1)
	for i < len(raw) && raw[i] != ']' {
		end := skipValue(raw, i)
		items = append(items, raw[i:end])
		i = skipSpace(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return items
}

package trace

import (
	"bytes"
	"encoding/json"
)

// duplicateKey returns the first top-level key that b, a JSON object that
// parsed, holds twice (compared as decoded, so "a" and "\u0061" are one
// key). encoding/json keeps the last of them silently; a row whose value
// depends on which one wins is refused instead.
func duplicateKey(b []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", false
	}
	seen := make(map[string]bool)
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return "", false
		}
		k, _ := t.(string)
		if seen[k] {
			return k, true
		}
		seen[k] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return "", false
		}
	}
	return "", false
}

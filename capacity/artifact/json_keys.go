package artifact

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// utf8BOM is the UTF-8 byte order mark. RFC 8259 (section 8.1) lets a
// parser ignore one at the start of a JSON text, and editors on Windows
// (Notepad, PowerShell's Out-File) write it: UnmarshalJSON accepts an
// artifact that begins with it, as if it were absent, and never writes
// one.
var utf8BOM = []byte("\xef\xbb\xbf")

// trimBOM returns data without a leading UTF-8 byte order mark.
func trimBOM(data []byte) []byte { return bytes.TrimPrefix(data, utf8BOM) }

// A key appears at most once in an object of an artifact. JSON leaves a
// repeated key to the parser (encoding/json keeps the last value, Python's
// json module too, other readers the first), so a document with one says
// two things at once: a "completed" of 5 and of 0 over the same rows.
// UnmarshalJSON refuses it, naming the key where it repeats.

// pathSeg is one step of a path into a document: an object key, or an
// array index when key is unset.
type pathSeg struct {
	key   []byte
	index int
	isKey bool
}

// duplicateKey returns a *pathError for the first key that appears twice
// in one object, at any depth, of the valid JSON document data (nil when
// none does). Keys are compared decoded, as encoding/json reads them, so
// "a" and "\u0061" are one key.
func duplicateKey(data []byte) error {
	var stack []pathSeg
	_, err := walkKeys(data, skipSpace(data, 0), &stack)
	return err
}

// walkKeys checks the value at b[i] and returns the index after it.
func walkKeys(b []byte, i int, stack *[]pathSeg) (int, error) {
	switch b[i] {
	case '{':
		// The keys seen, sub-slices of b unless escaped: no allocation
		// for the objects of an artifact.
		var seen [32][]byte
		keys := seen[:0]
		i = skipSpace(b, i+1)
		for i < len(b) && b[i] == '"' {
			end, escaped := skipString(b, i)
			key := b[i+1 : end-1]
			if escaped || !utf8.Valid(key) { // compared as decoded: invalid UTF-8 reads as U+FFFD
				s, _ := decodeString(b[i:end], escaped)
				key = []byte(s)
			}
			for _, k := range keys {
				if bytes.Equal(k, key) {
					return 0, &pathError{Path: formatPath(*stack, string(key)),
						Err: fmt.Errorf("duplicate key %q: a key may appear once in an object (readers disagree on which value counts)", key)}
				}
			}
			keys = append(keys, key)
			i = skipSpace(b, end)
			i = skipSpace(b, i+1) // ':'
			*stack = append(*stack, pathSeg{key: key, isKey: true})
			next, err := walkKeys(b, i, stack)
			if err != nil {
				return 0, err
			}
			*stack = (*stack)[:len(*stack)-1]
			i = skipSpace(b, next)
			if i < len(b) && b[i] == ',' {
				i = skipSpace(b, i+1)
			}
		}
		return i + 1, nil // '}'
	case '[':
		i = skipSpace(b, i+1)
		for n := 0; i < len(b) && b[i] != ']'; n++ {
			*stack = append(*stack, pathSeg{index: n})
			next, err := walkKeys(b, i, stack)
			if err != nil {
				return 0, err
			}
			*stack = (*stack)[:len(*stack)-1]
			i = skipSpace(b, next)
			if i < len(b) && b[i] == ',' {
				i = skipSpace(b, i+1)
			}
		}
		return i + 1, nil // ']'
	}
	return skipValue(b, i), nil
}

// formatPath writes the path of key under stack as pathError paths read:
// "anvil_go.requests[3].outcome".
func formatPath(stack []pathSeg, key string) string {
	var b strings.Builder
	for _, s := range stack {
		if s.isKey {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.Write(s.key)
		} else {
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
		}
	}
	if b.Len() > 0 {
		b.WriteByte('.')
	}
	b.WriteString(key)
	return b.String()
}

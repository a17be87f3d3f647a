// Package jsonstr writes JSON strings the two ways anvil needs: as Python's
// json.dump(ensure_ascii=False) writes them (the artifact) and as
// encoding/json with HTML escaping off writes them (request bodies). Both
// allocate nothing beyond growing the destination.
package jsonstr

import "unicode/utf8"

// Escaping selects how Append writes the few inputs on which
// JSON encoders legitimately differ. Every other byte is written the same
// way by both: '"' and '\\' and the control characters \b \f \n \r \t get
// their two-byte escapes, the other characters below U+0020 a \u00XX
// escape, and everything else (HTML characters, U+007F, non-ASCII text)
// is copied as it is.
type Escaping uint8

const (
	// Python is Python's json.dump with ensure_ascii=False, the
	// artifact's encoding: an invalid UTF-8 byte becomes the character
	// U+FFFD, and U+2028 and U+2029 are written as they are.
	Python Escaping = iota
	// Go is encoding/json with HTML escaping off, the request body's
	// encoding: an invalid UTF-8 byte becomes the escape \ufffd, and U+2028
	// and U+2029 are escaped.
	Go
)

const jsonHex = "0123456789abcdef"

// jsonPlain marks the ASCII bytes written as they are.
var jsonPlain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// Append appends s to dst as a JSON string escaped as esc says.
// It allocates nothing beyond growing dst, whether s is a string or bytes.
func Append[S ~string | ~[]byte](dst []byte, s S, esc Escaping) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonPlain[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', jsonHex[c>>4], jsonHex[c&0xF])
			}
			i++
			start = i
			continue
		}
		var head [utf8.UTFMax]byte
		r, size := utf8.DecodeRune(head[:copy(head[:], s[i:])])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			if esc == Go {
				dst = append(dst, `\ufffd`...)
			} else {
				dst = utf8.AppendRune(dst, utf8.RuneError)
			}
		case (r == '\u2028' || r == '\u2029') && esc == Go:
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', jsonHex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// EscapedLen is the number of bytes Append writes for the rune r
// under Python (utf8.RuneError for an invalid byte).
func EscapedLen(r rune) int {
	switch {
	case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t' || r == '\b' || r == '\f':
		return 2
	case r < 0x20:
		return 6
	}
	return utf8.RuneLen(r) // an invalid byte decodes as U+FFFD, 3 bytes as written
}

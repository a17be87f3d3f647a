package jsonpick

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Kind is the JSON type of a member's value, or Absent.
type Kind uint8

// The kinds of a member's value.
const (
	Absent Kind = iota // the member is not in the object (or its object is absent or null)
	Null
	Bool
	Number
	String
	Array
	Object
)

var kindNames = [...]string{"absent", "null", "bool", "number", "string", "array", "object"}

var _ fmt.Stringer = Kind(0)

// String returns the kind's name: "absent", "null", "string" and so on.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// KindOf returns the kind of a valid JSON value beginning with c.
func KindOf(c byte) Kind {
	switch c {
	case 'n':
		return Null
	case 't', 'f':
		return Bool
	case '"':
		return String
	case '[':
		return Array
	case '{':
		return Object
	}
	return Number
}

// Text is a member where the protocol expects a JSON string.
type Text struct {
	// Kind is the JSON type of the value.
	Kind Kind
	// Bytes is the string, unescaped, when Kind is String; nil otherwise.
	// It is valid as long as the decoded value it came from (see the
	// package documentation of its decoder).
	Bytes []byte
}

// NonEmpty reports whether the value is a non-empty string. A number, an
// object or any other non-string value is no text, as the client has always
// treated it.
func (t Text) NonEmpty() bool { return t.Kind == String && len(t.Bytes) > 0 }

// Is reports whether the value is the string s.
func (t Text) Is(s string) bool { return t.Kind == String && string(t.Bytes) == s }

// String returns the text, "" unless Kind is String. It allocates.
func (t Text) String() string { return string(t.Bytes) }

// AppendUnescaped appends the text of the contents s of a valid JSON string
// that has an escape sequence, decoded exactly as encoding/json decodes such
// a string: the escapes are replaced by what they stand for (\u0000 by a
// NUL byte); a \u escape of a high surrogate followed by one of a low
// surrogate is the pair's rune; any other \u escape of a surrogate is
// U+FFFD, and the escape after it, if any, is decoded on its own; every byte
// that does not begin a valid UTF-8 sequence (utf8.DecodeRune's size-1
// error) is U+FFFD.
func AppendUnescaped(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c != '\\' {
				dst = append(dst, c)
				i++
				continue
			}
			switch e := s[i+1]; e {
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				r := hex4(s[i+2:])
				i += 6
				if 0xD800 <= r && r < 0xE000 {
					if r < 0xDC00 && i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
						if lo := hex4(s[i+2:]); 0xDC00 <= lo && lo < 0xE000 {
							dst = utf8.AppendRune(dst, 0x10000+(r-0xD800)<<10+(lo-0xDC00))
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				dst = utf8.AppendRune(dst, r)
				continue
			default: // '"', '\\', '/'
				dst = append(dst, e)
			}
			i += 2
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && n == 1 {
			dst = utf8.AppendRune(dst, utf8.RuneError)
		} else {
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return dst
}

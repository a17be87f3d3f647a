package jsonpick

import (
	"encoding/binary"
	"math/bits"
)

// A validating JSON scanner over the payload. Every function takes the
// index of the first byte of what it scans and returns the index after it,
// or Fail when the bytes are not valid JSON, are cut short, or are anything
// the fast path leaves to encoding/json. The grammar is RFC 8259's, as
// encoding/json's scanner applies it: white space is space, tab, line feed
// and carriage return; strings may hold any byte but '"', '\\' and the
// control characters below 0x20, unvalidated UTF-8 included.

// Fail is the index returned when the fast path gives up.
const Fail = -1

// MaxFastDepth is the deepest nesting of arrays and objects the fast path
// skips in the value of a member that is not decoded; a payload nesting
// deeper there is decoded by encoding/json (whose own limit is 10000).
const MaxFastDepth = 64 * stackWords

// stackWords is the size of the skip stack in 64-bit words, one bit per
// level (1: object, 0: array).
const stackWords = 8

// SkipStack records, while a value is skipped, whether each open level is
// an object or an array, so that a closing bracket is checked against it.
type SkipStack [stackWords]uint64

// SkipSpace returns the index of the first byte at or after i that is not
// white space. Payloads rarely have any, hence the inlined first test.
func SkipSpace(b []byte, i int) int {
	if i < len(b) && b[i] > ' ' {
		return i
	}
	return skipSpaceSlow(b, i)
}

func skipSpaceSlow(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// Bytes of a little-endian word that stop a string scan: the quote, the
// backslash and the control characters. The masks are exact for the lowest
// flagged byte (the classic "has zero byte" test: a byte borrows from the
// next only when it is itself a hit), which is all the scan uses.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// stops returns the most significant bit of every byte of w that is a
// quote, a backslash or a control character (exact for the lowest one).
func stops(w uint64) uint64 {
	q := w ^ (lsb * '"')
	s := w ^ (lsb * '\\')
	return (((q - lsb) &^ q) | ((s - lsb) &^ s) | ((w - lsb*0x20) &^ w)) & msb
}

// upper returns the most significant bit of every byte of w, all of which
// are ASCII, that is an upper-case letter. Adding 0x80-'A' sets a byte's top
// bit exactly when it is at least 'A', adding 0x80-('Z'+1) when it is past
// 'Z'; no byte carries into the next, as none exceeds 0x7F.
func upper(w uint64) uint64 {
	return (w + lsb*(0x80-'A')) &^ (w + lsb*(0x80-'Z'-1)) & msb
}

// StringEnd scans the string starting at b[i] == '"'. It returns the index
// after the closing quote and whether the string has an escape sequence.
func StringEnd(b []byte, i int) (int, bool) {
	escaped := false
	i++
	for {
		for i+8 <= len(b) {
			m := stops(binary.LittleEndian.Uint64(b[i:]))
			if m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(b) {
			return Fail, escaped
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, escaped
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				return Fail, escaped
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || hex4(b[i+2:i+6]) < 0 {
					return Fail, escaped
				}
				i += 6
			default:
				return Fail, escaped
			}
		case c < 0x20:
			return Fail, escaped
		default:
			i++
		}
	}
}

// hex4 returns the value of four hexadecimal digits, or -1.
func hex4(h []byte) rune {
	var r rune
	for _, c := range h[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// LiteralEnd scans true, false or null starting at b[i].
func LiteralEnd(b []byte, i int) int {
	var lit string
	switch b[i] {
	case 't':
		lit = "true"
	case 'f':
		lit = "false"
	case 'n':
		lit = "null"
	default:
		return Fail
	}
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return Fail
	}
	return i + len(lit)
}

// scalarEnd scans a string, a number or a literal starting at b[i].
func scalarEnd(b []byte, i int) int {
	switch c := b[i]; {
	case c == '"':
		end, _ := StringEnd(b, i)
		return end
	case c == '-' || IsDigit(c):
		return NumberEnd(b, i)
	}
	return LiteralEnd(b, i)
}

// ValueEnd scans any JSON value starting at b[i] (i < len(b)), validating
// it entirely. Containers are walked without recursion; st records the
// open levels.
func ValueEnd(b []byte, i int, st *SkipStack) int {
	if c := b[i]; c != '{' && c != '[' {
		return scalarEnd(b, i)
	}
	depth := 0
	for {
		// A value starts at b[i].
		switch b[i] {
		case '{':
			if depth == MaxFastDepth {
				return Fail
			}
			i = SkipSpace(b, i+1)
			if i >= len(b) {
				return Fail
			}
			if b[i] == '}' { // empty: no level to open
				i++
				break
			}
			st[depth>>6] |= 1 << (depth & 63)
			depth++
			if i = memberValue(b, i); i < 0 {
				return Fail
			}
			continue
		case '[':
			if depth == MaxFastDepth {
				return Fail
			}
			i = SkipSpace(b, i+1)
			if i >= len(b) {
				return Fail
			}
			if b[i] == ']' {
				i++
				break
			}
			st[depth>>6] &^= 1 << (depth & 63)
			depth++
			continue
		default:
			if i = scalarEnd(b, i); i < 0 {
				return Fail
			}
		}
		// A value ended before b[i]: close levels until a comma.
		for {
			if depth == 0 {
				return i
			}
			i = SkipSpace(b, i)
			if i >= len(b) {
				return Fail
			}
			inObject := st[(depth-1)>>6]&(1<<((depth-1)&63)) != 0
			c := b[i]
			if c == ',' {
				i = SkipSpace(b, i+1)
				if inObject {
					i = memberValue(b, i)
				}
				if i < 0 || i >= len(b) {
					return Fail
				}
				break
			}
			if (inObject && c == '}') || (!inObject && c == ']') {
				depth--
				i++
				continue
			}
			return Fail
		}
	}
}

// memberValue scans a member name and its colon, starting at the name's
// quote, and returns the index of the member's value.
func memberValue(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return Fail
	}
	if i, _ = StringEnd(b, i); i < 0 {
		return Fail
	}
	i = SkipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return Fail
	}
	i = SkipSpace(b, i+1)
	if i >= len(b) {
		return Fail
	}
	return i
}

// NameEnd scans a member name from b[j], just after its opening quote, to
// the first quote, backslash, control character or non-ASCII byte, and
// returns its index and whether the bytes before it have an upper-case
// ASCII letter. The name is scanned eight bytes at a time while eight
// remain. A decoder reads a name that ends at a quote as it is, and hands
// any other (an escape or a non-ASCII byte: encoding/json folds names with
// Unicode's simple folding) to encoding/json.
func NameEnd(b []byte, j int) (int, bool) {
	var up uint64
	for j+8 <= len(b) {
		w := binary.LittleEndian.Uint64(b[j:])
		if m := stops(w) | w&msb; m != 0 {
			n := bits.TrailingZeros64(m) // 8 times the bytes before the stop, plus 7
			// upper is exact below the first non-ASCII byte, hence below n.
			return j + n>>3, up|upper(w)&(1<<n-1) != 0
		}
		up |= upper(w)
		j += 8
	}
	for ; j < len(b); j++ {
		c := b[j]
		if c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
			break
		}
		if 'A' <= c && c <= 'Z' {
			up = 1
		}
	}
	return j, up != 0
}

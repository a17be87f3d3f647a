package jsonpick

import (
	"fmt"
	"strconv"
)

// IntKind says what a usage count holds.
type IntKind uint8

// The kinds of a usage count. The stream client has always accepted a count
// exactly when it is IntInteger (the value of a json.Number whose Int64
// method succeeds); the other kinds say why one is not accepted.
const (
	// IntAbsent: the member is not present (or its object is absent or
	// null).
	IntAbsent IntKind = iota
	// IntNull: the member is null.
	IntNull
	// IntInteger: an integer within the range of int64, in Int.Value. It may
	// be negative (including -0, which is 0).
	IntInteger
	// IntNotInteger: a number with a fraction or an exponent (1.0, 1e3,
	// 1e400), whatever its value.
	IntNotInteger
	// IntOutOfRange: an integer outside the range of int64.
	IntOutOfRange
	// IntNotNumber: a bool, an object, an array, or a string that does not
	// hold a JSON number.
	IntNotNumber
)

var intKindNames = [...]string{"absent", "null", "integer", "not an integer", "out of int64 range", "not a number"}

var _ fmt.Stringer = IntKind(0)

// String returns a short description of the kind: "absent", "integer",
// "out of int64 range" and so on.
func (k IntKind) String() string {
	if int(k) < len(intKindNames) {
		return intKindNames[k]
	}
	return "IntKind(" + strconv.Itoa(int(k)) + ")"
}

// Int is a usage count.
type Int struct {
	// Value is the count when Kind is IntInteger, 0 otherwise.
	Value int64
	Kind  IntKind
	// Quoted: the value was a JSON string holding a JSON number ("12"),
	// which encoding/json's json.Number accepts; Kind then classifies the
	// number it holds.
	Quoted bool
}

// Int64 returns the count and whether it is an integer within int64: the
// value and acceptance the stream client has always used.
func (n Int) Int64() (int64, bool) { return n.Value, n.Kind == IntInteger }

// IsNumber reports whether s is exactly a JSON number (RFC 8259, section 6):
// an optional minus, an integer part without leading zeros, an optional
// fraction and an optional exponent, each with at least one digit.
func IsNumber(s []byte) bool {
	return len(s) > 0 && NumberEnd(s, 0) == len(s)
}

// NumberEnd returns the index after the JSON number starting at s[i], or
// Fail when none starts there. It stops at the first byte that cannot
// continue the number, which the caller checks is a delimiter.
func NumberEnd(s []byte, i int) int {
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i >= len(s) {
		return Fail
	}
	switch c := s[i]; {
	case c == '0':
		i++
	case '1' <= c && c <= '9':
		i++
		for i < len(s) && IsDigit(s[i]) {
			i++
		}
	default:
		return Fail
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || !IsDigit(s[i]) {
			return Fail
		}
		for i < len(s) && IsDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || !IsDigit(s[i]) {
			return Fail
		}
		for i < len(s) && IsDigit(s[i]) {
			i++
		}
	}
	return i
}

func IsDigit(c byte) bool { return '0' <= c && c <= '9' }

// Classify returns the count a valid JSON number s denotes. Only an integer
// literal can be an int64 (strconv.ParseInt, which json.Number.Int64 calls,
// accepts no fraction or exponent): its digits are accumulated in a uint64
// and compared with the largest magnitude of the sign, 2^63-1 or 2^63. More
// than 19 digits cannot fit (no leading zeros), so the accumulation cannot
// wrap before the check.
func Classify(s []byte) Int {
	neg := s[0] == '-'
	digits := s
	if neg {
		digits = s[1:]
	}
	if len(digits) > 19 {
		for _, c := range digits {
			if !IsDigit(c) {
				return Int{Kind: IntNotInteger}
			}
		}
		return Int{Kind: IntOutOfRange}
	}
	var u uint64
	for _, c := range digits {
		if !IsDigit(c) {
			return Int{Kind: IntNotInteger}
		}
		u = u*10 + uint64(c-'0')
	}
	limit := uint64(1<<63 - 1)
	if neg {
		limit++
	}
	if u > limit {
		return Int{Kind: IntOutOfRange}
	}
	if neg {
		return Int{Kind: IntInteger, Value: int64(-u)}
	}
	return Int{Kind: IntInteger, Value: int64(u)}
}

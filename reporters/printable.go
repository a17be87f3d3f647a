package reporters

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Printable returns s made safe to print on a terminal as one line: every
// character that a terminal would act on instead of showing is written as
// a visible Go-style escape, and every other character is kept as is.
// Escaped are:
//   - the C0 controls (NUL, ESC, BEL, backspace, carriage return, and tab
//     and newline too, so a value stays one line) and DEL, as \x00..\x1f
//     and \x7f;
//   - the C1 controls U+0080..U+009F (CSI U+009B among them), as \u0080;
//   - the characters that reorder or hide text: the bidirectional marks,
//     embeddings, overrides and isolates (U+061C, U+200E, U+200F,
//     U+202A..U+202E, U+2066..U+2069) and the line and paragraph
//     separators U+2028 and U+2029, as \u202e;
//   - each byte of invalid UTF-8, as \xff.
//
// A string that needs no escape is returned unchanged (no allocation).
// Server-provided text (model ids, error messages, failure classes read
// from an artifact) passes through Printable before anything in this
// module prints it; the result is also a valid benchfmt configuration
// value and contains no whitespace but spaces.
func Printable(s string) string {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if needsEscape(r, size) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x80 && needsEscape(r, size):
			fmt.Fprintf(&b, `\x%02x`, r)
		case needsEscape(r, size):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// PrintableLines is Printable for a message of several lines: each line
// is made safe by Printable and the newlines between them are kept.
func PrintableLines(s string) string {
	if !strings.ContainsRune(s, '\n') {
		return Printable(s)
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Printable(l)
	}
	return strings.Join(lines, "\n")
}

// needsEscape reports whether the rune r, decoded from size bytes, is one
// that Printable escapes.
func needsEscape(r rune, size int) bool {
	switch {
	case r == utf8.RuneError && size == 1: // invalid UTF-8
		return true
	case r < 0x20, r == 0x7f: // C0 controls and DEL
		return true
	case r >= 0x80 && r <= 0x9f: // C1 controls
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, // arabic letter mark, LRM, RLM
		r >= 0x202a && r <= 0x202e, // embeddings and overrides
		r >= 0x2066 && r <= 0x2069, // isolates
		r == 0x2028, r == 0x2029:   // line and paragraph separators
		return true
	}
	return false
}

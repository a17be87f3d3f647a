package conformance

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxNoteRunes bounds one logged note or reason, in characters.
const maxNoteRunes = 400

// safeText makes s safe to print on a terminal and to write in the verdict
// files: control characters (C0, DEL, C1, e.g. the ESC of a terminal
// escape sequence), the bidirectional overrides and isolates
// (U+202A..U+202E, U+2066..U+2069), the line and paragraph separators and
// the byte order mark are written as \uXXXX (\n, \r, \t as themselves
// escaped: "\n"), each byte of invalid UTF-8 as \xNN, and the text is cut
// after limit characters with the number of bytes left out.
func safeText(s string, limit int) string {
	var b strings.Builder
	n := 0
	for i := 0; i < len(s); {
		if n >= limit {
			fmt.Fprintf(&b, "... (%d more bytes)", len(s)-i)
			break
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += size
		n++
	}
	return b.String()
}

// unsafeRune reports whether r could change how a terminal shows the text
// around it.
func unsafeRune(r rune) bool {
	switch {
	case unicode.IsControl(r):
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	case r == 0x2028, r == 0x2029, r == 0xfeff:
		return true
	}
	return false
}

package reporters

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestPrintable(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain text is kept", "qwen3-32b: HTTP 503 (overloaded) ü 日本", "qwen3-32b: HTTP 503 (overloaded) ü 日本"},
		{"clear screen", "\x1b[2Jgone", `\x1b[2Jgone`},
		{"NUL and BEL", "a\x00b\x07", `a\x00b\x07`},
		{"line breaks and tabs", "one\ntwo\r\tthree", `one\x0atwo\x0d\x09three`},
		{"DEL", "x\x7f", `x\x7f`},
		{"C1 CSI", "a\u009b2Jb", `a\u009b2Jb`},
		{"bidi override", "evil\u202etxt.exe", `evil\u202etxt.exe`},
		{"isolates and marks", "\u2066a\u2069\u200e\u200f\u061c", `\u2066a\u2069\u200e\u200f\u061c`},
		{"line separators", "a\u2028b\u2029", `a\u2028b\u2029`},
		{"invalid UTF-8", "ok\xff\xfe", `ok\xff\xfe`},
		{"backslash text is ordinary", `C:\models\x`, `C:\models\x`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Printable(tc.in))
		})
	}
	require.Equal(t, "a\n\\x1b[2Jb\n", PrintableLines("a\n\x1b[2Jb\n"))
}

func TestPrintableDoesNotAllocateForSafeText(t *testing.T) {
	s := "model qwen3-32b engine vllm-0.11.0"
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = Printable(s) }))
}

// safeForTerminal fails t if out holds a byte or character a terminal
// would act on (newlines aside when lines is set).
func safeForTerminal(t *testing.T, out string, lines bool) {
	t.Helper()
	require.True(t, utf8.ValidString(out), "invalid UTF-8 in %q", out)
	for _, r := range out {
		if lines && r == '\n' {
			continue
		}
		require.False(t, needsEscape(r, utf8.RuneLen(r)), "%U survives in %q", r, out)
	}
}

func FuzzPrintable(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b[2J\x00", "\u202e\u2066", "\xff", "\u009b", "a\nb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Printable(s)
		safeForTerminal(t, got, false)
		require.NotContains(t, got, "\n")
		require.Equal(t, got, Printable(got), "escaping is idempotent")
		if !strings.ContainsFunc(s, func(r rune) bool { return needsEscape(r, utf8.RuneLen(r)) }) && utf8.ValidString(s) {
			require.Equal(t, s, got, "text without controls is kept")
		}
	})
}

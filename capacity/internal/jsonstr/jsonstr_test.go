package jsonstr

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// TestAppendMatchesEncodingJSON compares the body's string
// encoder with encoding/json (HTML escaping off) on awkward inputs.
func TestAppendMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "quote\" back\\slash", "\x00\x01\b\f\n\r\t\x1f\x7f", "<&>", "é€😀", "\u2028\u2029", "bad\xffutf8\xc3", strings.Repeat("def helper_1():\n", 3)} {
		require.Equal(t, encodingJSON(t, s), string(Append(nil, []byte(s), Go)), "%q", s)
	}
}

func encodingJSON(t testing.TB, s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(s))
	return strings.TrimSuffix(b.String(), "\n")
}

// FuzzAppend: the request body's escaping is encoding/json's to
// the byte; the artifact's (Python's) escaping decodes to the same string;
// strings and byte slices encode alike.
func FuzzAppend(f *testing.F) {
	f.Add("def helper_0():\n    return compute(0)  # routine specialist context\n")
	f.Add("\u2028\xff\"\\")
	f.Add("\x00\x1f\x7f\t<&>é😀\xc3")
	f.Fuzz(func(t *testing.T, s string) {
		got := Append(nil, []byte(s), Go)
		require.Equal(t, encodingJSON(t, s), string(got))
		require.Equal(t, string(got), string(Append(nil, s, Go)), "string and []byte")
		var back string
		require.NoError(t, json.Unmarshal(got, &back))
		if utf8.ValidString(s) {
			require.Equal(t, s, back)
		}

		py := Append(nil, s, Python)
		require.Equal(t, string(py), string(Append(nil, []byte(s), Python)), "string and []byte")
		var pyBack string
		require.NoError(t, json.Unmarshal(py, &pyBack))
		require.Equal(t, back, pyBack, "both escapings decode to the same string")
		require.True(t, utf8.Valid(py))
	})
}

// TestAppendEscapings pins where the two escapings differ.
func TestAppendEscapings(t *testing.T) {
	for _, tc := range []struct{ in, goWant, pyWant string }{
		{"a\u2028b\u2029", `"a\u2028b\u2029"`, "\"a\u2028b\u2029\""},
		{"bad\xff", `"bad\ufffd"`, "\"bad\ufffd\""},
		{"\x01\"\\\n<>&\x7f", `"\u0001\"\\\n<>&` + "\x7f\"", `"\u0001\"\\\n<>&` + "\x7f\""},
	} {
		require.Equal(t, tc.goWant, string(Append(nil, tc.in, Go)), "%q", tc.in)
		require.Equal(t, tc.pyWant, string(Append(nil, tc.in, Python)), "%q", tc.in)
	}
}

// TestAppendAllocs: encoding into a buffer with room allocates
// nothing, from a string or from bytes.
func TestAppendAllocs(t *testing.T) {
	s := "é \"quoted\"\n\xff\u2028 " + strings.Repeat("def helper_1():\n", 64)
	b := []byte(s)
	buf := make([]byte, 0, 8*len(s))
	for _, esc := range []Escaping{Go, Python} {
		require.Zero(t, testing.AllocsPerRun(100, func() { buf = Append(buf[:0], s, esc) }))
		require.Zero(t, testing.AllocsPerRun(100, func() { buf = Append(buf[:0], b, esc) }))
	}
}

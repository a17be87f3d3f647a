package chunk

import (
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// primer is decoded between two decodings of a fuzz input, so that state
// left by one payload (choices, unescaped text) cannot leak into the next.
const primer = `{"choices":[{"delta":{"role":"r\n","content":"c\t"},"finish_reason":"f\""},{"delta":{"reasoning":"x","content":"d"}},null],` +
	`"usage":{"prompt_tokens":1,"completion_tokens":"2","total_tokens":3,"prompt_tokens_details":{"cached_tokens":4}},"error":{"m":1}}`

// FuzzDecodeMatchesEncodingJSON checks the fast decoder against the
// reference for any payload: the same error, or the same chunk.
func FuzzDecodeMatchesEncodingJSON(f *testing.F) {
	for _, p := range capturedPayloads(f) {
		f.Add(p)
	}
	for _, tc := range edgeCases {
		f.Add([]byte(tc.data))
	}
	f.Add([]byte(primer))
	f.Fuzz(func(t *testing.T, data []byte) {
		var d Decoder
		checkDecode(t, &d, data)
		_, err := d.Decode([]byte(primer))
		require.NoError(t, err)
		checkDecode(t, &d, data)
	})
}

func checkDecode(t *testing.T, d *Decoder, data []byte) {
	t.Helper()
	ref := decodeReference(data)
	got, err := d.Decode(data)
	if !sameError(err, ref.err) {
		t.Fatalf("Decode(%q): error %v, encoding/json's %v", data, err, ref.err)
	}
	if diff := cmp.Diff(ref.chunk, got, chunkCmp); diff != "" {
		t.Fatalf("Decode(%q) disagrees with encoding/json (-json +fast):\n%s", data, diff)
	}
}

// TestCapturedPayloads decodes every event of the repository's captures on
// the fast path, as encoding/json does.
func TestCapturedPayloads(t *testing.T) {
	var d Decoder
	payloads := capturedPayloads(t)
	for name, p := range payloads {
		before := d.fallbacks
		checkDecode(t, &d, p)
		require.Equal(t, before, d.fallbacks, "%s went to encoding/json: %s", name, p)
	}
	t.Logf("%d payloads", len(payloads))
}

// within reports whether b is a non-empty sub-slice of the array of s.
func within(b, s []byte) bool {
	if len(b) == 0 || len(s) == 0 {
		return false
	}
	p, lo := uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(&s[0]))
	return lo <= p && p+uintptr(len(b)) <= lo+uintptr(cap(s))
}

// TestAliasing checks the documented aliasing: text without escapes is the
// payload's own bytes; text with escapes is in the decoder's buffer, the
// same storage from one payload to the next.
func TestAliasing(t *testing.T) {
	var d Decoder
	plain := []byte(delta(`"content":"plain text"`))
	c, err := d.Decode(plain)
	require.NoError(t, err)
	require.True(t, within(c.Choices[0].Content.Bytes, plain), "text without escapes is not a sub-slice of the payload")
	require.Equal(t, len(c.Choices[0].Content.Bytes), cap(c.Choices[0].Content.Bytes), "capacity reaches past the text")

	c, err = d.Decode([]byte(delta(`"content":"line\n"`)))
	require.NoError(t, err)
	first := c.Choices[0].Content.Bytes
	require.Equal(t, "line\n", string(first))
	require.True(t, within(first, d.buf))
	c, err = d.Decode([]byte(delta(`"content":"next\n"`)))
	require.NoError(t, err)
	require.Equal(t, "next\n", string(c.Choices[0].Content.Bytes))
	require.Equal(t, unsafe.Pointer(&first[0]), unsafe.Pointer(&c.Choices[0].Content.Bytes[0]), "the buffer was not reused")
}

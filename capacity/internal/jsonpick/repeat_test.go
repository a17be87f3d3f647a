package jsonpick_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/jsonpick"
)

// repeatDecoder is a decoder of testSchema whose varying text is the type,
// else the first choice's text.
func repeatDecoder() *jsonpick.Decoder { return jsonpick.NewDecoder(testSchema).Repeat(sType, sText) }

// fill returns a payload of d's kept shape with text and n in its holes.
func fill(t *testing.T, d *jsonpick.Decoder, text []byte, n uint64) ([]byte, bool) {
	t.Helper()
	pieces, texts, ok := jsonpick.ShapeOf(d)
	if !ok {
		return nil, false
	}
	var b []byte
	for k, p := range pieces {
		b = append(b, p...)
		switch {
		case k == len(texts):
		case texts[k]:
			b = append(b, text...)
		default:
			b = strconv.AppendUint(b, n, 10)
		}
	}
	return b, true
}

// plain reports whether b is the contents of a JSON string without escapes.
func plain(b []byte) bool {
	for _, c := range b {
		if c == '"' || c == '\\' || c < 0x20 {
			return false
		}
	}
	return true
}

// FuzzRepeatMatchesEncodingJSON decodes a payload, then the same with
// another text and other integers (from which the decoder learns which
// integers vary), then payloads of its kept shape with other texts and
// integers in its holes (twice in a row, and again after an unrelated
// payload): each decoding is encoding/json's, and a text without quote,
// backslash or control character takes the repeat path whenever the
// first payload qualified.
func FuzzRepeatMatchesEncodingJSON(f *testing.F) {
	for _, c := range cases {
		f.Add([]byte(c), []byte(" tok"), uint64(12), []byte(primer))
	}
	f.Add([]byte(`{"id":"r","seq":7,"type":"delta","n":3,"choices":[{"index":0,"text":"x","logprobs":[1]}],"created":1}`), []byte("é"), uint64(0), []byte(`{}`))
	f.Add([]byte(`{"seq":7,"choices":[{"text":"x","delta":{"content":"c"}}],"z":10}`), []byte(`a"b`), uint64(100), []byte(`{"seq":7,"choices":[{"text":"x","delta":{"content":"c"}}],"z":10}`))
	f.Fuzz(func(t *testing.T, first, text []byte, n uint64, other []byte) {
		d := repeatDecoder()
		check(t, d, first)
		if varied, ok := jsonpick.Vary(d, []byte("v"), n+1); ok {
			check(t, d, varied)
		}
		next, ok := fill(t, d, text, n)
		if !ok {
			check(t, d, other)
			return
		}
		before := d.Repeats()
		check(t, d, next)
		check(t, d, next)
		if plain(text) {
			require.Equal(t, before+2, d.Repeats(), "%q as %q did not repeat the shape", first, next)
		}
		check(t, d, other)
		check(t, d, next)
	})
}

// TestRepeatTakesTheFastPath: a stream's text deltas are repeats after
// the first two (the second, whose counter differs, tells that the counter
// varies), each with its own text and counter, and a payload of another
// shape between them is decoded in full, the shape kept.
func TestRepeatTakesTheFastPath(t *testing.T) {
	d := repeatDecoder()
	event := func(seq int, text string) []byte {
		return []byte(`{"choices":[{"index":0,"text":"` + text + `","logprobs":null}],"seq":` + strconv.Itoa(seq) + `,"error":{"x":[1,2]},"type":null}`)
	}
	for i, text := range []string{" a", " bb", "", " ccc", "é"} {
		check(t, d, event(9+i, text))
		require.Equal(t, text, string(d.Elem(sText, 0).Bytes))
		require.Equal(t, `{"x":[1,2]}`, string(d.Value(sError).Bytes))
		require.Equal(t, max(i-1, 0), d.Repeats(), "payload %d", i)
	}
	check(t, d, []byte(`{"n":1}`)) // no text: the shape is kept
	check(t, d, event(100, " d"))
	require.Equal(t, 4, d.Repeats())
	// An escaped text, a signed or leading-zero counter: decoded in full.
	check(t, d, event(101, `\n`))
	check(t, d, []byte(`{"choices":[{"index":0,"text":"x","logprobs":null}],"seq":-1,"error":{"x":[1,2]},"type":null}`))
	check(t, d, []byte(`{"choices":[{"index":0,"text":"x","logprobs":null}],"seq":01,"error":{"x":[1,2]},"type":null}`))
	require.Equal(t, 4, d.Repeats())
	require.Equal(t, 1, d.Fallbacks(), "the leading zero goes to encoding/json for its error")
	// The index never varied: a payload whose index differs is decoded in full.
	check(t, d, []byte(`{"choices":[{"index":1,"text":"x","logprobs":null}],"seq":5,"error":{"x":[1,2]},"type":null}`))
	require.Equal(t, 4, d.Repeats())
}

// TestRepeatAllocations: repeats allocate nothing.
func TestRepeatAllocations(t *testing.T) {
	d := repeatDecoder()
	data := []byte(`{"type":"response.output_text.delta","delta":" the","sequence_number":4}`)
	require.NoError(t, d.Decode(data))
	if n := testing.AllocsPerRun(100, func() { _ = d.Decode(data) }); n != 0 {
		t.Fatalf("%v allocations per repeat", n)
	}
	require.Equal(t, 101, d.Repeats())
}

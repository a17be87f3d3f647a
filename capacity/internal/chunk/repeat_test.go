package chunk

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// vllmContent is a content chunk as vLLM writes it, around its text.
const vllmContent = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"%s"},"logprobs":null,"finish_reason":null}]}`

// FuzzRepeatMatchesEncodingJSON decodes a payload, then the same payload
// with its content's text replaced: the second decoding, whether or not it
// took the repeat path, is encoding/json's, and a text without quote,
// backslash or control character takes the repeat path whenever the first
// payload qualified. A third, unrelated payload is decoded as
// encoding/json decodes it after both.
func FuzzRepeatMatchesEncodingJSON(f *testing.F) {
	for _, p := range capturedPayloads(f) {
		f.Add(p, []byte(" tok"), []byte(primer))
	}
	f.Add([]byte(`{"choices":[{"delta":{"content":"a","role":"assistant"},"finish_reason":"stop"}],"object":"chat.completion.chunk","timings":{"n":1},"message":"m"}`), []byte("é"), []byte(`{"choices":[{"delta":{"content":"a\"b"}}]}`))
	f.Add([]byte(`{"choices":[{"delta":{"content":"x"}}]}`), []byte(""), []byte(`{"choices":[{"delta":{"content":"x"}}]}`))
	f.Add([]byte(`{"choices":[{"delta":{"content":"x","content":"y"}}]}`), []byte("z"), []byte(`{}`))
	f.Fuzz(func(t *testing.T, first, text, other []byte) {
		var d Decoder
		checkDecode(t, &d, first)
		if d.shape.ok {
			s := &d.shape
			next := append(append(append([]byte(nil), s.bytes[:s.prefix]...), text...), s.bytes[s.prefix:]...)
			before := d.repeats
			// The fast path, when it takes next (with bytes after it),
			// finds its end and its text, and Decode agrees.
			n, got, fast := d.RepeatedContent(append(next[:len(next):len(next)], "\n\nnext"...))
			if fast {
				require.Equal(t, len(next), n)
				c, err := d.Decode(next)
				require.NoError(t, err)
				requirePlainContent(t, c, string(got))
				before = d.repeats
			}
			checkDecode(t, &d, next)
			if plainText(text) {
				require.Equal(t, before+1, d.repeats, "%q with %q did not repeat the shape", first, text)
			}
		}
		checkDecode(t, &d, other)
	})
}

// TestRepeatTakesTheFastPath: the content chunks of a stream after its
// first are repeats, each with its own text, and a chunk of another shape
// is decoded in full.
func TestRepeatTakesTheFastPath(t *testing.T) {
	var d Decoder
	for i, text := range []string{" a", " bb", "", " ccc", "é"} {
		payload := []byte(fmtContent(text))
		c, err := d.Decode(payload)
		require.NoError(t, err)
		require.Equal(t, text, string(c.Choices[0].Content.Bytes))
		require.Equal(t, "chat.completion.chunk", string(c.Object.Bytes))
		require.Equal(t, i, d.repeats, "chunk %d", i)
	}
	c, err := d.Decode([]byte(`{"choices":[{"delta":{"content":" a"},"finish_reason":"stop"}]}`))
	require.NoError(t, err)
	require.Equal(t, "stop", string(c.Choices[0].FinishReason.Bytes))
	require.Equal(t, 4, d.repeats)
	// An escaped text is decoded in full: its text is unescaped.
	c, err = d.Decode([]byte(fmtContent(`\n`)))
	require.NoError(t, err)
	require.Equal(t, "\n", string(c.Choices[0].Content.Bytes))
	require.Equal(t, 4, d.repeats)
}

func fmtContent(text string) string { return fmt.Sprintf(vllmContent, text) }

// TestRepeatReasoning: a thinking model's chunks, whose text is
// reasoning_content (vLLM) or reasoning beside an empty content (ollama),
// repeat their shape too, with the reasoning flag of each one's own text.
func TestRepeatReasoning(t *testing.T) {
	for _, tc := range []struct {
		format      string
		ollamaStyle bool
	}{
		{`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"reasoning_content":"%s"},"logprobs":null,"finish_reason":null}]}`, false},
		{`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"%s"},"finish_reason":null}]}`, true},
	} {
		var d Decoder
		for i, text := range []string{" Let", " me", "", " think"} {
			payload := []byte(fmt.Sprintf(tc.format, text))
			checkDecode(t, &d, payload)
			c, err := d.Decode(payload)
			require.NoError(t, err)
			ch := c.Choices[0]
			require.Equal(t, text != "", ch.HasReasoning(), "%s", payload)
			require.Equal(t, tc.ollamaStyle && text != "", ch.Reasoning)
			if tc.ollamaStyle {
				require.Equal(t, String, ch.Content.Kind)
				require.Equal(t, "assistant", string(ch.Role.Bytes))
			}
			require.Equal(t, 2*i+1, d.repeats, "%s", payload)
		}
	}
}

// requirePlainContent checks that c is a plain content delta of text, as
// RepeatedContent promises.
func requirePlainContent(t *testing.T, c *Chunk, text string) {
	t.Helper()
	require.Len(t, c.Choices, 1)
	ch := c.Choices[0]
	require.Equal(t, String, ch.Content.Kind)
	require.Equal(t, text, string(ch.Content.Bytes))
	require.False(t, ch.HasReasoning() || ch.FinishReason.NonEmpty() || c.Usage.Present || c.Timings != nil || c.HasError() || c.IsErrorObject(),
		"not a plain content delta: %+v", c)
}

// TestRepeatedContent: after a plain content delta, a payload of its shape
// at the start of the bytes is found with its text and its length; one
// of another shape, with an escape, cut short, or after a chunk that is
// not a plain content delta is not.
func TestRepeatedContent(t *testing.T) {
	plain := fmtContent(" a")
	tests := []struct {
		name, first, b string
		text           string // want, when found
		found          bool
	}{
		{"repeat", plain, fmtContent(" bb") + "\n\ndata: x", " bb", true},
		{"empty text", plain, fmtContent(""), "", true},
		{"exactly the payload", plain, fmtContent("é"), "é", true},
		{"escaped text", plain, fmtContent(`\n`), "", false},
		{"quote in text", plain, fmtContent(`a"b`), "", false},
		{"control character", plain, fmtContent("a\tb"), "", false},
		{"cut short", plain, fmtContent(" bb")[:50], "", false},
		{"other prefix", plain, strings.Replace(fmtContent(" bb"), "chatcmpl-1", "chatcmpl-2", 1), "", false},
		{"other suffix", plain, strings.Replace(fmtContent(" bb"), `"finish_reason":null`, `"finish_reason":"x"`, 1), "", false},
		{"leading space", plain, " " + fmtContent(" bb"), "", false},
		{"finish reason", `{"choices":[{"delta":{"content":"a"},"finish_reason":"stop"}]}`, `{"choices":[{"delta":{"content":"b"},"finish_reason":"stop"}]}`, "", false},
		{"usage", `{"choices":[{"delta":{"content":"a"}}],"usage":{"completion_tokens":1}}`, `{"choices":[{"delta":{"content":"b"}}],"usage":{"completion_tokens":1}}`, "", false},
		{"reasoning", `{"choices":[{"delta":{"content":"a","reasoning":"r"}}]}`, `{"choices":[{"delta":{"content":"b","reasoning":"r"}}]}`, "", false},
		{"varying reasoning", `{"choices":[{"delta":{"reasoning":"r"}}]}`, `{"choices":[{"delta":{"reasoning":"s"}}]}`, "", false},
		{"timings", `{"choices":[{"delta":{"content":"a"}}],"timings":{"n":1}}`, `{"choices":[{"delta":{"content":"b"}}],"timings":{"n":1}}`, "", false},
		{"error object", `{"object":"error","choices":[{"delta":{"content":"a"}}]}`, `{"object":"error","choices":[{"delta":{"content":"b"}}]}`, "", false},
		{"line end in the shape", "{\n" + `"choices":[{"delta":{"content":"a"}}]}`, "{\n" + `"choices":[{"delta":{"content":"b"}}]}`, "", false},
		{"no shape", `{"choices":[]}`, `{"choices":[]}`, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d Decoder
			_, err := d.Decode([]byte(tt.first))
			require.NoError(t, err)
			n, text, ok := d.RepeatedContent([]byte(tt.b))
			require.Equal(t, tt.found, ok)
			if !ok {
				return
			}
			require.Equal(t, tt.text, string(text))
			payload := tt.b[:n]
			require.True(t, strings.HasSuffix(payload, "}"), "%q", payload)
			c, err := d.Decode([]byte(payload))
			require.NoError(t, err)
			requirePlainContent(t, c, tt.text)
		})
	}
}

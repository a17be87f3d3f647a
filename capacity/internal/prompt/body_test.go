package prompt

import (
	"bytes"
	"fmt"
	"io"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/client"
)

// readBody reads a streamed body with reads of size step.
func readBody(t testing.TB, b *Body, step int) []byte {
	t.Helper()
	var out bytes.Buffer
	r := b.NewReader()
	buf := make([]byte, step)
	for {
		n, err := r.Read(buf)
		out.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil || n == 0 {
			t.Fatalf("read %d bytes, %v: a read that returns no byte must return io.EOF", n, err)
		}
	}
	require.NoError(t, r.Close())
	return out.Bytes()
}

// testEncoder is the encoder of a run of model "m" with an extra field.
func testEncoder(t testing.TB) *client.Encoder {
	t.Helper()
	enc, err := client.NewEncoder(client.ChatCompletions, &client.Request{Model: "m", MaxTokens: 64, Extra: map[string]any{"ignore_eos": true}})
	require.NoError(t, err)
	return enc
}

// TestStreamedBodyBytes: for every layout (shared and unique prefixes of
// many sizes, no prefix, budgets too small for any filler or for the
// closing instruction, canaries, response words, nonces), the streamed
// body of every kind of prompt is byte for byte Encoder.AppendBody of the
// prompt Append builds (or the same refusal), its ContentLength is its
// length, and any read size and any number of readers (a retry, GetBody)
// give the same bytes.
func TestStreamedBodyBytes(t *testing.T) {
	enc := testEncoder(t)
	checked := 0
	var prompt []byte
	for _, unique := range []bool{false, true} {
		for _, prefix := range []int{0, 3, 51, 1500, 20000} {
			for _, extra := range []struct {
				name     string
				canaries bool
				words    int
				nonce    string
			}{{"plain", false, 0, "0123456789abcdef"}, {"canaries", true, 0, "0123456789abcdef"}, {"one word", false, 1, "0123456789abcdef"},
				{"words+canaries", true, 7, "0123456789abcdef"}, {"no nonce", true, 0, ""}} {
				cfg := Config{Canaries: extra.canaries, Seed: 42, ResponseWords: extra.words, Unique: unique, Nonce: extra.nonce, PrefixChars: prefix}
				l, err := New(cfg)
				require.NoError(t, err)
				for _, budget := range []int{0, 40, 96, 300, 1536, 12288 - 37, Chars(24000)} {
					for _, kind := range []Kind{Measured, Warmup, Calibration} {
						name := fmt.Sprintf("%+v/budget=%d/kind=%d", cfg, budget, kind)
						label, offset := 3, 3
						if kind == Warmup {
							offset = 5 + label
						}
						want, wantErr := l.Append(prompt[:0], label, offset, budget/3, budget, kind)
						prompt = want
						b, err := l.Body(enc, label, offset, budget/3, budget, kind)
						if wantErr != nil {
							require.EqualError(t, err, wantErr.Error(), "%s: the same refusal", name)
							continue
						}
						require.NoError(t, err, name)
						require.Len(t, want, budget, "%s: the prompt fills its budget", name)
						wantBody := enc.AppendBody(nil, want)
						require.Equal(t, int64(len(wantBody)), b.ContentLength(), "%s: ContentLength", name)
						for _, step := range []int{1, 7, 100, 32 << 10} {
							if step*4096 < len(wantBody) {
								continue // small reads of the small bodies suffice
							}
							require.True(t, bytes.Equal(wantBody, readBody(t, b, step)), "%s: body read %d bytes at a time", name, step)
						}
						checked++
					}
				}
			}
		}
	}
	require.Greater(t, checked, 700, "bodies compared")
}

// TestStreamedBodyReaders: two readers of one body read it at once (the
// transport's GetBody while a first attempt is still being written), and
// the body passes iotest's reader checks.
func TestStreamedBodyReaders(t *testing.T) {
	l, err := New(Config{Canaries: true, Unique: true, Nonce: "n0nce", PrefixChars: Chars(8000)})
	require.NoError(t, err)
	enc := testEncoder(t)
	prompt, err := l.Append(nil, 1, 1, 4096, Chars(4096), Measured)
	require.NoError(t, err)
	want := enc.AppendBody(nil, prompt)
	b, err := l.Body(enc, 1, 1, 4096, Chars(4096), Measured)
	require.NoError(t, err)
	r1, r2 := b.NewReader(), b.NewReader()
	var got1, got2 bytes.Buffer
	buf := make([]byte, 333)
	for done1, done2 := false, false; !done1 || !done2; {
		if !done1 {
			n, err := r1.Read(buf)
			got1.Write(buf[:n])
			done1 = err == io.EOF
		}
		if !done2 {
			n, err := r2.Read(buf[:100])
			got2.Write(buf[:n])
			done2 = err == io.EOF
		}
	}
	require.Equal(t, string(want), got1.String())
	require.Equal(t, string(want), got2.String())
	require.NoError(t, iotest.TestReader(b.NewReader(), want))
}

// BenchmarkStreamedBody builds the streamed body of a 262,144-token
// prompt and reads it as the transport does (32 KiB reads): the cost that
// replaced Append + AppendBody, with a few hundred bytes held per request
// instead of the prompt and its body.
func BenchmarkStreamedBody(b *testing.B) {
	for _, unique := range []bool{false, true} {
		b.Run(fmt.Sprintf("ctx=262144/unique=%t", unique), func(b *testing.B) {
			l, err := New(Config{Canaries: true, Unique: unique, Nonce: "0123456789abcdef", PrefixChars: Chars(8000)})
			require.NoError(b, err)
			enc := testEncoder(b)
			buf := make([]byte, 32<<10)
			first, err := l.Body(enc, 0, 0, 262144, Chars(262144), Measured)
			require.NoError(b, err)
			b.SetBytes(first.ContentLength())
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				body, err := l.Body(enc, i%64, i%64, 262144, Chars(262144), Measured)
				if err != nil {
					b.Fatal(err)
				}
				r := body.NewReader()
				for {
					if _, err := r.Read(buf); err != nil {
						break
					}
				}
				i++
			}
		})
	}
}

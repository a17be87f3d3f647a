package capacity

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"testing/iotest"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// readBody reads a streamed body with reads of size step.
func readBody(t testing.TB, b *streamedBody, step int) []byte {
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
		require.NoError(t, err)
		require.Positive(t, n, "a read that returns no byte must return io.EOF")
	}
	require.NoError(t, r.Close())
	return out.Bytes()
}

// TestStreamedBodyBytes: for every workload shape (shared and unique
// prefixes of many sizes, no prefix, contexts too small for any filler,
// canaries, response words, nonces, exact-sizing budgets, warm-up and
// calibration prompts), the streamed body is byte for byte
// requestEncoder.appendBody of the prompt appendPrompt builds, its
// ContentLength is its length, and any read size and any number of
// readers (a retry, GetBody) give the same bytes.
func TestStreamedBodyBytes(t *testing.T) {
	type shape struct {
		name string
		w    Workload
	}
	var shapes []shape
	for _, mode := range []PromptCacheMode{promptCacheShared, promptCacheUnique} {
		for _, prefix := range []int{0, None, 1, 17, 500, 20000} {
			for _, extra := range []struct {
				name     string
				canaries bool
				words    int
				omit     bool
			}{{"plain", false, 0, false}, {"canaries", true, 0, false}, {"one word", false, 1, false}, {"words+canaries", true, 7, false}, {"no nonce", true, 0, true}} {
				for _, context := range []int{minContextTokens, 100, 512, 4096, 24000} {
					shapes = append(shapes, shape{
						name: fmt.Sprintf("%s/prefix=%d/%s/ctx=%d", mode, prefix, extra.name, context),
						w: Workload{Requests: 5, Warmup: 2, ContextTokens: context, PromptCacheMode: mode, SharedPrefixTokens: prefix,
							RequestCanaries: extra.canaries, ResponseWords: extra.words, OmitUniqueNonce: extra.omit, Seed: 42},
					})
				}
			}
		}
	}
	shapes = append(shapes, shape{name: "sampled contexts", w: Workload{Requests: 40, Warmup: 2, Seed: 7}})
	enc, err := newRequestEncoder(client.ChatCompletions, Target{Model: "m", ExtraBody: map[string]any{"ignore_eos": true}}, Workload{MaxTokens: 64})
	require.NoError(t, err)
	checked := 0
	for _, s := range shapes {
		p, err := newPlan(s.w, 1<<20, defaultMargin, "0123456789abcdef")
		if err != nil {
			continue // a context too small for the closing instruction: refused before any body exists
		}
		var prompt []byte
		compare := func(what string, want func() ([]byte, error), got func() (*streamedBody, error)) {
			t.Helper()
			pr, wantErr := want()
			b, err := got()
			if wantErr != nil {
				require.EqualError(t, err, wantErr.Error(), "%s %s: the same refusal", s.name, what)
				return
			}
			require.NoError(t, err, "%s %s", s.name, what)
			wantBody := enc.AppendBody(nil, pr)
			require.Equal(t, int64(len(wantBody)), b.ContentLength(), "%s %s: ContentLength", s.name, what)
			for _, step := range []int{1, 7, 100, 32 << 10} {
				if step*4096 < len(wantBody) {
					continue // small reads of the small bodies suffice
				}
				require.True(t, bytes.Equal(wantBody, readBody(t, b, step)), "%s %s: body read %d bytes at a time", s.name, what, step)
			}
			checked++
		}
		for i := range p.Len() {
			compare(fmt.Sprintf("request %d", i),
				func() ([]byte, error) { prompt, err = p.AppendPrompt(prompt[:0], i); return prompt, err },
				func() (*streamedBody, error) { return p.measuredBody(enc, i) })
		}
		for k := range s.w.Warmup {
			compare(fmt.Sprintf("warm-up %d", k),
				func() ([]byte, error) { prompt, err = p.AppendWarmupPrompt(prompt[:0], k); return prompt, err },
				func() (*streamedBody, error) { return p.warmupBody(enc, k) })
		}
		for _, chars := range []int{1, 40, 300, 5000} {
			compare(fmt.Sprintf("calibration %d chars", chars),
				func() ([]byte, error) {
					prompt, err = p.appendCalibrationPrompt(prompt[:0], 1, chars)
					return prompt, err
				},
				func() (*streamedBody, error) {
					return p.streamPrompt(enc, 1, 1, p.Contexts[1], chars, promptCalibration)
				})
		}
		// Exact sizing: each request's own character budget.
		p.chars = make([]int, p.Len())
		for i := range p.chars {
			p.chars[i] = promptChars(p.Contexts[i]) - 37*i
		}
		for i := range p.Len() {
			compare(fmt.Sprintf("exact request %d", i),
				func() ([]byte, error) { prompt, err = p.AppendPrompt(prompt[:0], i); return prompt, err },
				func() (*streamedBody, error) { return p.measuredBody(enc, i) })
		}
	}
	require.Greater(t, checked, 3000, "bodies compared")
}

// TestStreamedBodyReaders: two readers of one body read it at once (the
// transport's GetBody while a first attempt is still being written), and
// the body passes iotest's reader checks.
func TestStreamedBodyReaders(t *testing.T) {
	p, err := newPlan(Workload{Requests: 2, ContextTokens: 4096, PromptCacheMode: promptCacheUnique, RequestCanaries: true}, 1<<20, defaultMargin, "n0nce")
	require.NoError(t, err)
	enc, err := newRequestEncoder(client.ChatCompletions, Target{Model: "m"}, Workload{MaxTokens: 64})
	require.NoError(t, err)
	prompt, err := p.AppendPrompt(nil, 1)
	require.NoError(t, err)
	want := enc.AppendBody(nil, prompt)
	b, err := p.measuredBody(enc, 1)
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

// TestStreamedBodyRedirected: a caller's client that follows a 307 or 308
// sends the body again through GetBody; the server receives the very same
// bytes, as many as Content-Length says, both times.
func TestStreamedBodyRedirected(t *testing.T) {
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		synctest.Test(t, func(t *testing.T) {
			var (
				mu     sync.Mutex
				bodies []string
			)
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				raw, err := io.ReadAll(r.Body)
				require.NoError(t, err)
				require.EqualValues(t, len(raw), r.ContentLength, "Content-Length")
				mu.Lock()
				bodies = append(bodies, string(raw))
				mu.Unlock()
				if r.URL.Path == "/v1/chat/completions" {
					http.Redirect(w, r, "/v2/chat/completions", status)
					return
				}
				wiretest.WriteOKStream(w, raw)
			})
			rep, err := Run(t.Context(), pipeTarget(t, h), Workload{Requests: 1, ContextTokens: 4096, PromptCacheMode: promptCacheUnique})
			require.NoError(t, err)
			require.Empty(t, rep.Failures)
			require.Len(t, bodies, 2)
			require.True(t, json.Valid([]byte(bodies[0])))
			require.Equal(t, bodies[0], bodies[1], "the redirected request carries the same body")
		})
	}
}

// BenchmarkStreamedBody builds the streamed body of a 262,144-token
// prompt and reads it as the transport does (32 KiB reads): the cost that
// replaced AppendPrompt + appendBody, with a few hundred bytes held per
// request instead of the prompt and its body.
func BenchmarkStreamedBody(b *testing.B) {
	for _, mode := range []PromptCacheMode{promptCacheShared, promptCacheUnique} {
		b.Run(fmt.Sprintf("ctx=262144/%s", mode), func(b *testing.B) {
			p, err := newPlan(Workload{Requests: 64, ContextTokens: 262144, PromptCacheMode: mode, RequestCanaries: true}, 1048576, defaultMargin, "0123456789abcdef")
			require.NoError(b, err)
			enc, err := newRequestEncoder(client.ChatCompletions, Target{Model: "m"}, Workload{MaxTokens: 64})
			require.NoError(b, err)
			buf := make([]byte, 32<<10)
			first, err := p.measuredBody(enc, 0)
			require.NoError(b, err)
			b.SetBytes(first.ContentLength())
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				body, err := p.measuredBody(enc, i%64)
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

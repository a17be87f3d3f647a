package fakeserver

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// outputChunks returns the trace's reasoning and content chunks.
func outputChunks(tr Trace) []Chunk {
	var out []Chunk
	for _, c := range tr.Chunks {
		if c.Kind == chunkReasoning || c.Kind == chunkContent {
			out = append(out, c)
		}
	}
	return out
}

// TestPeriodicStalls: every StallEvery-th gap between output chunks is
// exactly StallFor longer, as the client observes and the trace records;
// the engine's schedule is unchanged.
func TestPeriodicStalls(t *testing.T) {
	for _, tc := range []struct {
		name    string
		every   int
		stall   time.Duration
		scale   float64
		written []time.Duration // output chunk write offsets after the prefill
	}{
		{"none", 0, 10 * time.Millisecond, 1, []time.Duration{0, ms(1), ms(2), ms(3), ms(4)}},
		{"every 2nd gap", 2, 10 * time.Millisecond, 1, []time.Duration{0, ms(1), ms(12), ms(13), ms(24)}},
		{"every gap", 1, 5 * time.Millisecond, 1, []time.Duration{0, ms(6), ms(12), ms(18), ms(24)}},
		{"every 3rd gap, time scaled", 3, 10 * time.Millisecond, 0.5, []time.Duration{0, ms(0.5), ms(1), ms(6.5), ms(7)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := exact() // 995 µs of prefill, then one token per 1 ms step, 5 tokens
				cfg.StallEvery, cfg.StallFor, cfg.TimeScale = tc.every, tc.stall, tc.scale
				srv := NewInMemory(cfg)
				defer srv.Close()
				stamps := stampedPost(t, srv, streamBody(stringOf(995), 64))
				synctest.Wait()
				tr, _ := srv.Trace(0)
				var all []time.Duration
				for _, c := range tr.Chunks {
					all = append(all, c.Written)
				}
				require.Equal(t, all, stamps, "the client sees each write when the trace says")
				p := time.Duration(float64(995*time.Microsecond) * tc.scale)
				var written []time.Duration
				for i, c := range outputChunks(tr) {
					written = append(written, c.Written-p)
					assert.Equal(t, time.Duration(float64(ms(float64(i)))*tc.scale), c.Scheduled-p, "chunk %d scheduled by the engine", i)
					assert.Equal(t, 1, c.Tokens)
				}
				if diff := cmp.Diff(tc.written, written); diff != "" {
					t.Errorf("output chunk write offsets (-want +got):\n%s", diff)
				}
				stalls := 0
				for i := 1; i < len(written); i++ {
					if written[i]-written[i-1] >= time.Duration(float64(tc.stall)*tc.scale) {
						stalls++
					}
				}
				want := 0
				if tc.every > 0 {
					want = 4 / tc.every
				}
				assert.Equal(t, want, stalls, "stalls among the 4 gaps")
			})
		})
	}
}

func stringOf(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'y'
	}
	return string(b)
}

// TestTokensPerChunk: every output chunk carries exactly TokensPerChunk
// tokens, whatever the speculative steps accept; only the last chunk of
// each kind may be shorter, and it is sent when its last token is made.
func TestTokensPerChunk(t *testing.T) {
	for _, tc := range []struct {
		name            string
		size            int
		spec            Range
		reasoning, free int
		tokens          []int
		kinds           string
	}{
		{"plain steps", 3, Range{Min: 1, Max: 1}, 0, 7, []int{3, 3, 1}, "ccc"},
		{"speculative steps", 3, Range{Min: 1, Max: 7}, 0, 12, []int{3, 3, 3, 3}, "cccc"},
		{"reasoning then content", 2, Range{Min: 1, Max: 3}, 5, 5, []int{2, 2, 1, 2, 2, 1}, "rrrccc"},
		{"zero: one chunk per step", 0, Range{Min: 1, Max: 1}, 0, 3, []int{1, 1, 1}, "ccc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := exact()
				cfg.TokensPerChunk, cfg.SpecTokens = tc.size, tc.spec
				cfg.ReasoningTokens = Range{Min: tc.reasoning, Max: tc.reasoning}
				cfg.AnswerTokens = Range{Min: tc.free, Max: tc.free}
				srv := NewInMemory(cfg)
				defer srv.Close()
				_, body, err := post(t, srv, streamBody("hello", 64), nil)
				require.NoError(t, err)
				d := decode(body)
				synctest.Wait()
				tr, _ := srv.Trace(0)
				var tokens []int
				kinds := ""
				for _, c := range outputChunks(tr) {
					tokens = append(tokens, c.Tokens)
					kinds += string(c.Kind[0])
				}
				assert.Equal(t, tc.tokens, tokens)
				assert.Equal(t, tc.kinds, kinds)
				assert.Equal(t, tc.reasoning+tc.free, d.usage.Usage.CompletionTokens)
				if tc.size == 0 {
					return
				}
				// Plain steps: token i is made at prefill + i ms, so a chunk
				// ending with token i is scheduled then.
				if tc.spec.Max == 1 {
					end := -1
					for _, c := range outputChunks(tr) {
						end += c.Tokens
						assert.Equal(t, tr.PrefillDone+ms(float64(end)), c.Scheduled)
					}
				}
			})
		})
	}
}

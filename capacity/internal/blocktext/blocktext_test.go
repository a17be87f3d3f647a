package blocktext_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/blocktext"
	"github.com/anvilbench/anvil/capacity/trace"
)

// commonPrefix is the length of the common prefix of a and b, up to
// limit.
func commonPrefix(a, b string, limit int) int {
	n := min(len(a), len(b), limit)
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

func commonIDs(a, b []int64) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// TestRealTraceSharing writes the prompts of the real Mooncake rows and
// compares every pair: rows sharing a prefix of hash_ids share those
// blocks byte for byte, and at their first different id they differ
// within the block's first line, from its first character when the ids
// differ modulo FirstChars.
// mooncakeBlockTokens is the size of the Mooncake traces' blocks.
const mooncakeBlockTokens = 512

func TestRealTraceSharing(t *testing.T) {
	for _, file := range []string{
		"mooncake-conversation_trace-first500.jsonl",
		"mooncake-synthetic_trace-first500.jsonl",
	} {
		t.Run(file, func(t *testing.T) {
			f, err := os.Open("../../../testdata/traces/" + file)
			require.NoError(t, err)
			defer f.Close()
			layout := blocktext.Layout{BlockTokens: mooncakeBlockTokens, Sizing: blocktext.CharsPerToken(3)}
			L, err := layout.BlockChars()
			require.NoError(t, err)
			require.Equal(t, 1536, L)
			type row struct {
				ids    []int64
				text   string
				blocks int // complete blocks in text
				cut    int // characters of blocks in text
			}
			var rows []row
			r := trace.NewReader(f, file)
			for r.Scan() {
				rec := r.Record()
				tail := fmt.Sprintf("\n# request %d: summarize the above in one line.", rec.Line)
				if len(tail) > 3*rec.PromptTokens {
					tail = fmt.Sprintf("\n#%d", rec.Line) // the synthetic trace has 13-token prompts
				}
				text, err := layout.Text(blocktext.Prompt{Blocks: rec.Blocks, Tokens: rec.PromptTokens,
					Own: fmt.Sprintf("request %d", rec.Line), Tail: tail})
				require.NoError(t, err)
				require.Len(t, text, 3*rec.PromptTokens, "line %d", rec.Line)
				require.True(t, strings.HasSuffix(text, tail))
				cut := len(text) - len(tail)
				rows = append(rows, row{rec.Blocks, text, min(len(rec.Blocks), cut/L), cut})
			}
			require.NoError(t, r.Err())
			require.Len(t, rows, 500)

			var sharedPairs, deepPairs, firstChar, collisions int
			for i := range rows {
				for j := range i {
					a, b := rows[i], rows[j]
					k := commonIDs(a.ids, b.ids)
					cp := commonPrefix(a.text, b.text, (k+1)*L)
					if shared := min(k, a.blocks, b.blocks); shared > 0 {
						sharedPairs++
						if shared >= 2 {
							deepPairs++
						}
						if cp < shared*L {
							t.Fatalf("rows %d and %d share %d blocks, %d bytes", i, j, shared, cp)
						}
					}
					if k == len(a.ids) || k == len(b.ids) || a.cut <= k*L || b.cut <= k*L {
						continue // no block k in one of them
					}
					header := len(fmt.Sprint(max(a.ids[k], b.ids[k]))) + 1
					if cp >= k*L+header {
						t.Fatalf("rows %d and %d: ids %d and %d: %d bytes in common", i, j, a.ids[k], b.ids[k], cp)
					}
					if (a.ids[k]-b.ids[k])%int64(blocktext.FirstChars) != 0 {
						if cp != k*L {
							t.Fatalf("rows %d and %d: ids %d and %d: %d bytes in common, want %d", i, j, a.ids[k], b.ids[k], cp, k*L)
						}
						firstChar++
					} else {
						collisions++
					}
				}
			}
			// The premise: the trace's rows do share blocks, some more than one.
			require.Positive(t, sharedPairs)
			require.Positive(t, deepPairs)
			require.Positive(t, firstChar)
			t.Logf("%d pairs share leading blocks (%d two or more); at the first different id %d pairs differ from the first character, %d from the second (ids equal modulo %d)",
				sharedPairs, deepPairs, firstChar, collisions, blocktext.FirstChars)
		})
	}
}

// TestSizing: the blocks take the layout's Sizing, the prompt the budget
// AppendText is given; a block's bytes never depend on the budget, the
// request or the block's position.
func TestSizing(t *testing.T) {
	layout := blocktext.Layout{BlockTokens: 16, Sizing: blocktext.SizingFunc(func(n int) int { return 4*n + 25 })}
	L, err := layout.BlockChars()
	require.NoError(t, err)
	require.Equal(t, 89, L)
	b7, err := layout.AppendBlock(nil, 7)
	require.NoError(t, err)
	require.Len(t, b7, L)
	require.True(t, strings.HasPrefix(string(b7), "H7000000000000000000\ndef block_line():"), "%q", b7)
	require.Equal(t, byte('\n'), b7[L-1])
	b9, err := layout.AppendBlock(nil, 9)
	require.NoError(t, err)
	salted := layout
	salted.Salt = "run 5f3a"
	s7, err := salted.AppendBlock(nil, 7)
	require.NoError(t, err)
	require.Len(t, s7, L)
	require.True(t, strings.HasPrefix(string(s7), "H7000000000000000000 run 5f3a\ndef block_line():"), "%q", s7)

	for _, chars := range []int{L + 1, 2*L + 30, 3*L + 200} {
		p := blocktext.Prompt{Blocks: []int64{9, 7}, Own: "request 3", Tail: "\n# end"}
		got, err := layout.AppendText([]byte("prefix:"), p, chars)
		require.NoError(t, err)
		require.Len(t, got, len("prefix:")+chars)
		body := string(got[len("prefix:") : len(got)-len(p.Tail)])
		full := string(b9) + string(b7)
		if len(body) <= len(full) {
			require.Equal(t, full[:len(body)], body, "chars %d", chars)
			continue
		}
		require.Equal(t, full, body[:len(full)])
		own := body[len(full):]
		want := "#request 3\ndef own_line():"
		require.True(t, strings.HasPrefix(own, want) || strings.HasPrefix(want, own), "%q", own)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		layout blocktext.Layout
		p      blocktext.Prompt
		chars  int
		want   string
	}{
		{blocktext.Layout{BlockTokens: 0, Sizing: blocktext.CharsPerToken(3)}, blocktext.Prompt{Blocks: []int64{1}}, 10,
			"blocktext: invalid prompt: Layout.BlockTokens = 0: must be at least 1"},
		{blocktext.Layout{BlockTokens: 4, Sizing: blocktext.CharsPerToken(3)}, blocktext.Prompt{Blocks: []int64{1}}, 10,
			"blocktext: invalid prompt: Layout.Sizing.Chars(4) = 12: a block must be at least 22 characters (its header)"},
		{blocktext.Layout{BlockTokens: 16}, blocktext.Prompt{Blocks: []int64{1}}, 10,
			"blocktext: invalid prompt: Layout.Sizing: must be non-nil"},
		{blocktext.Layout{BlockTokens: 16, Sizing: blocktext.CharsPerToken(3)}, blocktext.Prompt{Tail: "12345"}, 4,
			"blocktext: invalid prompt: 4 characters cannot hold the tail of 5 characters"},
		{blocktext.Layout{BlockTokens: 16, Sizing: blocktext.CharsPerToken(3)}, blocktext.Prompt{Blocks: []int64{-1}}, 40,
			"blocktext: invalid prompt: block id -1: must be >= 0"},
	}
	for _, tc := range tests {
		_, err := tc.layout.AppendText(nil, tc.p, tc.chars)
		require.EqualError(t, err, tc.want)
		require.ErrorIs(t, err, blocktext.ErrLayout)
	}
}

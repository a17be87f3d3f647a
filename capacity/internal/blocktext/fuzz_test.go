package blocktext_test

import (
	"strings"
	"testing"

	"github.com/anvilbench/anvil/capacity/internal/blocktext"
)

// FuzzLayout holds AppendText to its contract for any blocks, sizes and
// budgets: the text has exactly the budget's length and ends with the
// tail; two prompts whose ids agree on a prefix agree on those blocks'
// bytes (as far as both hold them); the first block whose ids differ
// differs within its first line, and from its first character when the
// ids differ modulo FirstChars.
func FuzzLayout(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3}, []byte{0, 1, 9}, uint16(16), uint16(150), uint16(120), "\n# end")
	f.Add([]byte{7}, []byte{7}, uint16(8), uint16(30), uint16(400), "")
	f.Add([]byte{5, 67}, []byte{5, 5}, uint16(10), uint16(64), uint16(64), "\n# t")
	f.Fuzz(func(t *testing.T, a, b []byte, blockTokens, charsA, charsB uint16, tail string) {
		layout := blocktext.Layout{BlockTokens: int(blockTokens%64) + 8, Sizing: blocktext.CharsPerToken(3), Salt: "s"}
		L, err := layout.BlockChars()
		if err != nil {
			t.Fatal(err)
		}
		ids := func(raw []byte) []int64 {
			out := make([]int64, len(raw))
			for i, x := range raw {
				out[i] = int64(x)
			}
			return out
		}
		ia, ib := ids(a), ids(b)
		text := func(blocks []int64, chars int, own string) string {
			out, err := layout.AppendText(nil, blocktext.Prompt{Blocks: blocks, Own: own, Tail: tail}, chars)
			if chars < len(tail) {
				if err == nil {
					t.Fatalf("budget %d below the tail %d: no error", chars, len(tail))
				}
				return ""
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(out) != chars || !strings.HasSuffix(string(out), tail) {
				t.Fatalf("len %d, want %d; tail %q", len(out), chars, tail)
			}
			return string(out[:len(out)-len(tail)])
		}
		ta, tb := text(ia, int(charsA), "a"), text(ib, int(charsB), "b")
		k := 0
		for k < len(ia) && k < len(ib) && ia[k] == ib[k] {
			k++
		}
		common := min(k*L, len(ta), len(tb))
		if ta[:common] != tb[:common] {
			t.Fatalf("ids agree on %d blocks, texts differ before byte %d", k, common)
		}
		if k < len(ia) && k < len(ib) && len(ta) > k*L && len(tb) > k*L {
			first := ta[k*L] != tb[k*L]
			if (ia[k]-ib[k])%int64(blocktext.FirstChars) != 0 && !first {
				t.Fatalf("ids %d and %d: the same first character", ia[k], ib[k])
			}
			line := min(len(ta), len(tb), (k+1)*L, k*L+5)
			if ta[k*L:line] == tb[k*L:line] && line == k*L+5 {
				t.Fatalf("ids %d and %d: the same first line %q", ia[k], ib[k], ta[k*L:line])
			}
		}
	})
}

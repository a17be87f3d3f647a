package embeddings

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/capture"
)

// BenchmarkCheck checks Ollama's captured answer of four 64-value vectors
// and llama.cpp's base64 one.
func BenchmarkCheck(b *testing.B) {
	for _, tc := range []struct {
		file string
		want Want
	}{
		{"ollama-0.17.4-embeddings-list4.json", Want{Inputs: 4}},
		{"llamacpp-b10573-embeddings-base64.json", Want{Inputs: 1, Format: Base64}},
	} {
		b.Run(tc.file, func(b *testing.B) {
			body, err := os.ReadFile(filepath.Join(capture.Dir("../../.."), tc.file))
			require.NoError(b, err)
			c := NewChecker()
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Check(body, tc.want); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package reporters

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/anvilbench/anvil/capacity"
)

func BenchmarkReadJSON(b *testing.B) {
	seed, err := os.ReadFile(seedPath)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("seed", func(b *testing.B) { benchRead(b, seed) })
	b.Run("largest", func(b *testing.B) {
		var buf bytes.Buffer
		if err := EncodeJSON(&buf, largestReport(b)); err != nil {
			b.Fatal(err)
		}
		benchRead(b, buf.Bytes())
	})
}

func benchRead(b *testing.B, data []byte) {
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ReadJSON(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteJSON(b *testing.B) {
	seed := loadReport(b, seedPath)
	b.Run("seed/encode", func(b *testing.B) { benchEncode(b, seed) })
	b.Run("seed/file", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "seed.json")
		b.ReportAllocs()
		for b.Loop() {
			if err := WriteJSON(path, seed); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("largest/encode", func(b *testing.B) { benchEncode(b, largestReport(b)) })
}

func benchEncode(b *testing.B, r *capacity.Report) {
	var n countWriter
	if err := EncodeJSON(&n, r); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		if err := EncodeJSON(io.Discard, r); err != nil {
			b.Fatal(err)
		}
	}
}

type countWriter int

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}

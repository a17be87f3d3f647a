package artifact

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func BenchmarkRead(b *testing.B) {
	seed, err := os.ReadFile(seedPath)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("seed", func(b *testing.B) { benchRead(b, seed) })
}

func benchRead(b *testing.B, data []byte) {
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Read(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteFile(b *testing.B) {
	seed, _ := readFile(b, seedPath)
	b.Run("seed/encode", func(b *testing.B) { benchEncode(b, seed) })
	b.Run("seed/file", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "seed.json")
		b.ReportAllocs()
		for b.Loop() {
			if err := seed.WriteFile(path); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func benchEncode(b *testing.B, r *Report) {
	var n countWriter
	if err := write(&n, r); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		if err := write(io.Discard, r); err != nil {
			b.Fatal(err)
		}
	}
}

type countWriter int

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}

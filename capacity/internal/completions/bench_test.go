package completions

import (
	"path/filepath"
	"testing"

	"github.com/anvilbench/anvil/capacity/internal/capture"
)

// BenchmarkDecode decodes the events of Ollama's captured stream (but
// [DONE]), one event per iteration.
func BenchmarkDecode(b *testing.B) {
	d := NewDecoder()
	capture.Bench(b, filepath.Join(capture.Dir("../../.."), "ollama-0.17.4-completions-stream-usage.sse"), func(_, data []byte) error {
		_, err := d.Decode(data)
		return err
	})
	if d.Fallbacks() != 0 {
		b.Fatal("went to encoding/json")
	}
}

package messages

import (
	"path/filepath"
	"testing"

	"github.com/anvilbench/anvil/capacity/internal/capture"
)

// BenchmarkDecode decodes the events of Ollama's captured stream, one
// event per iteration: a text delta is most of them; message_start's
// message object is decoded twice.
func BenchmarkDecode(b *testing.B) {
	d := NewDecoder()
	capture.Bench(b, filepath.Join(capture.Dir("../../.."), "ollama-0.17.4-messages-stream.sse"), func(name, data []byte) error {
		_, err := d.Decode(name, data)
		return err
	})
	if d.Fallbacks() != 0 {
		b.Fatal("went to encoding/json")
	}
}

package messages

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/capture"
)

// BenchmarkDecode decodes every event of Ollama's captured stream, one
// event per iteration: a text delta is most of them; message_start's
// message object is decoded twice.
func BenchmarkDecode(b *testing.B) {
	evs, err := capture.Events(filepath.Join(capture.Dir("../../.."), "ollama-0.17.4-messages-stream.sse"))
	require.NoError(b, err)
	d := NewDecoder()
	size := 0
	for _, ev := range evs {
		size += len(ev.Data)
	}
	b.SetBytes(int64(size / len(evs)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		ev := evs[i%len(evs)]
		if _, err := d.Decode(ev.Name, ev.Data); err != nil {
			b.Fatal(err)
		}
		i++
	}
	if d.Fallbacks() != 0 {
		b.Fatal("went to encoding/json")
	}
}

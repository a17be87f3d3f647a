package completions

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/capture"
)

// BenchmarkDecode decodes every event of Ollama's captured stream (but
// [DONE]), one event per iteration.
func BenchmarkDecode(b *testing.B) {
	evs, err := capture.Events(filepath.Join(capture.Dir("../../.."), "ollama-0.17.4-completions-stream-usage.sse"))
	require.NoError(b, err)
	var data [][]byte
	size := 0
	for _, ev := range evs {
		if !bytes.Equal(ev.Data, []byte("[DONE]")) {
			data = append(data, ev.Data)
			size += len(ev.Data)
		}
	}
	d := NewDecoder()
	b.SetBytes(int64(size / len(data)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := d.Decode(data[i%len(data)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	if d.Fallbacks() != 0 {
		b.Fatal("went to encoding/json")
	}
}

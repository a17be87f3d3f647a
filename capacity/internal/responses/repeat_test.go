package responses

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/capture"
)

// TestRepeats: every text delta of a stream after its first is decoded as
// a repeat, and those of Ollama's, whose sequence_number counts up, after
// its second (whose counter differs from the first's: the decoder learns
// that it varies).
func TestRepeats(t *testing.T) {
	for file, want := range map[string]int{
		"ollama-0.17.4-responses-stream-string.sse":   6, // 8 deltas, sequence_number 4 to 11: the second tells it varies
		"llamacpp-b10573-responses-stream-string.sse": 7,
		"llamacpp-b10573-think-responses-stream.sse":  4, // 6 reasoning deltas, the first escaped ("\n)")
	} {
		d := NewDecoder()
		got := capture.Repeats(t, capture.Dir("../../.."), file, d, func(name, data []byte) error {
			_, err := d.Decode(name, data)
			return err
		})
		require.Equal(t, want, got, file)
	}
}

package messages

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/capture"
)

// TestRepeats: every text or thinking delta of a stream after its first
// is decoded as a repeat.
func TestRepeats(t *testing.T) {
	for file, want := range map[string]int{
		"ollama-0.17.4-messages-stream.sse":         7, // 8 text deltas
		"llamacpp-b10573-messages-stream.sse":       7,
		"llamacpp-b10573-think-messages-stream.sse": 4, // 6 thinking deltas, the first escaped ("\n)")
	} {
		d := NewDecoder()
		got := capture.Repeats(t, capture.Dir("../../.."), file, d, func(name, data []byte) error {
			_, err := d.Decode(name, data)
			return err
		})
		require.Equal(t, want, got, file)
	}
}

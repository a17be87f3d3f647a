package completions

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/capture"
)

// TestRepeats: every text chunk of a stream after its first is decoded as
// a repeat (the finish chunk, whose text is empty, is not one: its
// finish_reason differs).
func TestRepeats(t *testing.T) {
	for file, want := range map[string]int{
		"ollama-0.17.4-completions-stream-usage.sse":   7, // 9 chunks with text, the last of them the finish
		"llamacpp-b10573-completions-stream-usage.sse": 7,
	} {
		d := NewDecoder()
		got := capture.Repeats(t, capture.Dir("../../.."), file, d, func(name, data []byte) error {
			_, err := d.Decode(data)
			return err
		})
		require.Equal(t, want, got, file)
	}
}

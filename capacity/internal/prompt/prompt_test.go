package prompt

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPromptTails pins the closing instructions, the text a model reads.
func TestPromptTails(t *testing.T) {
	tests := []struct {
		cfg    Config
		index  int
		warmup bool
		want   string
	}{
		{Config{}, 7, false, "\n# request 7: summarize the above in one line."},
		{Config{Canaries: true, Seed: 1717}, 3, false,
			"\n# request 3: begin your answer with ANVIL_REQ_1717_00003, then summarize the above in one line."},
		{Config{Canaries: true, Seed: 1717}, 3, true, "\n# warmup request 3: summarize the above in one line."},
		{Config{ResponseWords: 1}, 0, false,
			"\n# request 0: reply with exactly 1 word: the lowercase word code, and nothing else."},
		{Config{ResponseWords: 12, Canaries: true, Seed: -5}, 12345, false,
			"\n# request 12345: begin your answer with ANVIL_REQ_-5_12345, then reply with exactly 12 words: the lowercase word code repeated 12 times, separated by spaces, and nothing else."},
	}
	for _, tt := range tests {
		l, err := New(tt.cfg)
		require.NoError(t, err)
		require.Equal(t, tt.want, string(l.AppendTail(nil, tt.index, tt.warmup)))
	}
}

// TestAppendLines: lines(offset, n) is the formula's lines cut to n
// characters, appended after what dst holds.
func TestAppendLines(t *testing.T) {
	require.Equal(t, "x", string(AppendLines([]byte("x"), 0, 0)))
	want := "def helper_7():\n    return compute(0)  # routine specialist context\ndef helper_8():\n"
	require.Equal(t, "x"+want, string(AppendLines([]byte("x"), 7, len(want))))
	require.Len(t, AppendLines(nil, 123, 10_000), 10_000)
	require.Empty(t, AppendLines(nil, 0, -4))
}

// TestAppendRefusesATailThatDoesNotFit: a budget below the closing
// instruction is an error naming the request, its context and the sizes;
// at the closing instruction's length the prompt is the instruction alone.
func TestAppendRefusesATailThatDoesNotFit(t *testing.T) {
	l, err := New(Config{PrefixChars: 300})
	require.NoError(t, err)
	tail := l.AppendTail(nil, 4, false)
	_, err = l.Append(nil, 4, 4, 15, len(tail)-1, Measured)
	require.EqualError(t, err, "capacity: request 4: a context of 15 tokens (45 characters) cannot hold its 46-character closing instruction")
	got, err := l.Append(nil, 4, 4, 16, len(tail), Measured)
	require.NoError(t, err)
	require.Equal(t, string(tail), string(got))
}

package itl

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// event is an output event: its arrival and the tokens it carried (-2:
// added with Add, without a count).
type event struct {
	at     time.Duration
	tokens int
}

func TestAddTokensSplitsGaps(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name     string
		events   []event
		gaps     int
		perToken bool
		itl      ITL
	}{
		{name: "one token per chunk", events: []event{{0, 1}, {10 * ms, 1}, {20 * ms, 1}},
			gaps: 2, perToken: true, itl: ITL{P50: 10, P90: 10, P99: 10, Max: 10}},
		{name: "three tokens in a chunk", events: []event{{0, 1}, {9 * ms, 3}, {12 * ms, 1}},
			gaps: 4, perToken: true, itl: ITL{P50: 3, P90: 3, P99: 3, Max: 3}},
		{name: "first event's tokens add no gap", events: []event{{0, 5}, {4 * ms, 2}},
			gaps: 2, perToken: true, itl: ITL{P50: 2, P90: 2, P99: 2, Max: 2}},
		{name: "a chunk without a new token", events: []event{{0, 1}, {5 * ms, 0}, {8 * ms, 1}},
			gaps: 1, perToken: true, itl: ITL{P50: 8, P90: 8, P99: 8, Max: 8}},
		{name: "remainder nanoseconds", events: []event{{0, 1}, {10, 3}},
			gaps: 3, perToken: true, itl: ITL{P50: 3e-6, P90: 4e-6, P99: 4e-6, Max: 4e-6}},
		{name: "a chunk without a count", events: []event{{0, 1}, {6 * ms, 2}, {10 * ms, -2}},
			gaps: 3, perToken: false, itl: ITL{P50: 3, P90: 4, P99: 4, Max: 4}},
		{name: "a count that went down", events: []event{{0, 1}, {6 * ms, -1}, {8 * ms, 1}},
			gaps: 2, perToken: false, itl: ITL{P50: 2, P90: 6, P99: 6, Max: 6}},
		{name: "an unbelievable count", events: []event{{0, 1}, {6 * ms, MaxTokensPerEvent + 1}},
			gaps: 1, perToken: false, itl: ITL{P50: 6, P90: 6, P99: 6, Max: 6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Stream
			for _, e := range tt.events {
				if e.tokens == -2 {
					s.Add(e.at)
				} else {
					s.AddTokens(e.at, e.tokens)
				}
			}
			sum, err := s.Summary(DefaultStallRule(), nil)
			require.NoError(t, err)
			require.Equal(t, len(tt.events), sum.OutputChunks)
			require.Equal(t, tt.gaps, sum.Gaps)
			require.Equal(t, tt.perToken, sum.PerToken)
			require.Equal(t, tt.itl, *sum.ITL)
		})
	}
}

func TestRunPerTokenNeedsEveryStream(t *testing.T) {
	run, err := NewRun(DefaultStallRule())
	require.NoError(t, err)
	var s Stream
	s.AddTokens(0, 1)
	s.AddTokens(time.Millisecond, 2)
	_, err = run.Record(&s, nil)
	require.NoError(t, err)
	ct, ok := run.Result()
	require.True(t, ok)
	require.True(t, ct.PerToken)

	other, err := NewRun(DefaultStallRule())
	require.NoError(t, err)
	s.Reset()
	s.Add(0)
	s.Add(time.Millisecond)
	_, err = other.Record(&s, nil)
	require.NoError(t, err)
	require.NoError(t, run.Merge(other))
	ct, _ = run.Result()
	require.False(t, ct.PerToken, "one stream of chunk gaps makes the run's gaps per chunk")
}

// A chunk of three tokens 9 ms after the first token is three tokens of
// 3 ms each, not one gap of 9 ms.
func ExampleStream_AddTokens() {
	var s Stream
	s.AddTokens(0, 1)
	s.AddTokens(9*time.Millisecond, 3)
	sum, _ := s.Summary(DefaultStallRule(), nil)
	fmt.Println(sum.Gaps, sum.ITL.Max, sum.PerToken)
	// Output: 3 3 true
}

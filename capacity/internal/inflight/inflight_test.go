package inflight

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// at is a request sent at sent and ended at end (never, for end < 0).
func at(sent, end float64) artifact.RequestDetail {
	d := artifact.RequestDetail{SentMS: &sent}
	if end >= 0 {
		d.EndMS = &end
	}
	return d
}

// TestTimeline counts a timeline worked by hand: a request ending at an
// instant is no longer in flight at it, one that never ended stays in
// flight, one never sent is not counted.
func TestTimeline(t *testing.T) {
	requests := []artifact.RequestDetail{at(0, 100), at(10, 50), at(50, 120), at(65, -1), {}}
	tl := Of(requests)
	for _, tc := range []struct {
		at   float64
		want int
	}{{-1, 0}, {0, 1}, {10, 2}, {49.9, 2}, {50, 2}, {65, 3}, {100, 2}, {120, 1}, {1e9, 1}} {
		require.Equal(t, tc.want, tl.At(tc.at), "at %v", tc.at)
	}
	require.Equal(t, 1, tl.Others(&requests[2], 50), "request 2, sent at 50: request 0 in flight beside it")
	require.Equal(t, 1, tl.Others(&requests[2], 110), "request 3 alone: request 2 is not among the others")
	require.Equal(t, 3, tl.Others(&requests[1], 65), "request 1 ended at 50: all 3 in flight are others")
	require.Equal(t, 3, tl.Others(&requests[4], 65), "a request never sent is never in flight")
}

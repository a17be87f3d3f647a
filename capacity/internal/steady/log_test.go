package steady

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLogSteady: four streams of back-to-back 250 ms requests with an
// even TTFT are steady once enough bins hold them, tested at most once a
// second; a log whose requests hang in flight is not.
func TestLogSteady(t *testing.T) {
	var l Log
	k, reachedAt := 0, -1.0
	for now := 0.0; now <= 40_000 && reachedAt < 0; now += 250 {
		for s := range 4 {
			if now > 0 {
				l.Ended(k-4+s, -1, now, true, 50)
			}
			l.Sent(k+s, now)
		}
		k += 4
		if l.Steady(now, 1000, 4) {
			reachedAt = now
		}
	}
	require.Positive(t, reachedAt, "a steady log is found steady")
	require.Less(t, reachedAt, 40_000.0)
	require.Zero(t, int(reachedAt)%1000, "tested once a second from the start")
	require.True(t, l.Reached())
	require.True(t, l.Steady(reachedAt+1, 1000, 4), "once steady, always")

	var hung Log
	for s := range 4 {
		hung.Sent(s, 0)
	}
	require.False(t, hung.Steady(30_000, 1000, 4), "no completion: no window")
	require.False(t, hung.Reached())
}

package arrival

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestOffered(t *testing.T) {
	tests := []struct {
		name     string
		schedule []time.Duration
		want     float64
	}{
		{"empty", nil, 0},
		{"one request", []time.Duration{0}, 0},
		{"two requests", []time.Duration{0, 250 * time.Millisecond}, 4},
		{"n-1 intervals over the span", []time.Duration{0, time.Second, 3 * time.Second}, 2.0 / 3},
		{"origin does not matter", []time.Duration{time.Hour, time.Hour + time.Second, time.Hour + 3*time.Second}, 2.0 / 3},
		{"order does not matter", []time.Duration{3 * time.Second, 0, time.Second}, 2.0 / 3},
		{"one instant", []time.Duration{5, 5, 5}, math.Inf(1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Offered(tt.schedule))
		})
	}
}

// TestOfferedConstant checks that a constant schedule offers its rate
// exactly, up to the nanosecond rounding of its span.
func TestOfferedConstant(t *testing.T) {
	for _, rate := range []float64{0.5, 3, 10, 1000} {
		offsets, err := Schedule(Spec{Process: Constant, Rate: rate}, 1001)
		require.NoError(t, err)
		require.InEpsilon(t, rate, Offered(offsets), 1e-9, "rate %g", rate)
	}
}

func TestAchieved(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(offsets ...time.Duration) []time.Time {
		ts := make([]time.Time, len(offsets))
		for i, d := range offsets {
			ts[i] = start.Add(d)
		}
		return ts
	}
	tests := []struct {
		name string
		sent []time.Time
		want float64
	}{
		{"none", nil, 0},
		{"one", at(0), 0},
		{"two", at(0, 100*time.Millisecond), 10},
		{"late first send", at(time.Second, 2*time.Second, 3*time.Second), 1},
		{"out of order", at(2*time.Second, 0, time.Second, 4*time.Second), 0.75},
		{"one instant", at(time.Second, time.Second), math.Inf(1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Achieved(tt.sent))
		})
	}
}

// TestAchievedMatchesOffered checks that sending exactly on schedule
// achieves the offered rate.
func TestAchievedMatchesOffered(t *testing.T) {
	offsets, err := Schedule(Spec{Process: Gamma, Rate: 50, Burstiness: 0.5, Seed: 3}, 500)
	require.NoError(t, err)
	start := time.Unix(1_700_000_000, 0)
	sent := make([]time.Time, len(offsets))
	for i, d := range offsets {
		sent[i] = start.Add(d)
	}
	require.Equal(t, Offered(offsets), Achieved(sent))
}

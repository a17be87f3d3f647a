package itl

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// gapsFromBytes decodes fuzz input as gaps: each 2 bytes are one gap of
// 0..65,535 µs, so repeats and zeros are common.
func gapsFromBytes(b []byte) []time.Duration {
	gaps := make([]time.Duration, len(b)/2)
	for i := range gaps {
		gaps[i] = time.Duration(binary.LittleEndian.Uint16(b[2*i:])) * time.Microsecond
	}
	return gaps
}

// naiveStalls counts the gaps over the rule's threshold for the naive
// median, by definition.
func naiveStalls(gaps []time.Duration, rule StallRule) (int, float64) {
	thr := float64(rule.Override)
	if rule.Override == 0 {
		sorted := slices.Clone(gaps)
		slices.Sort(sorted)
		median := sorted[(len(sorted)+1)/2-1] // rank ceil(n/2)
		thr = math.Max(rule.Relative*float64(median), float64(rule.Floor))
	}
	n := 0
	for _, g := range gaps {
		if float64(g) > thr {
			n++
		}
	}
	return n, thr / 1e6
}

// FuzzExactPercentiles checks the exact path of Stream and Run against a
// naive sort on arbitrary gap sequences.
func FuzzExactPercentiles(f *testing.F) {
	f.Add([]byte{1, 0}, uint8(10), uint16(50))
	f.Add([]byte{4, 0, 4, 0, 4, 0, 80, 0, 4, 0}, uint8(10), uint16(0))
	f.Add([]byte{0, 0, 0, 0, 255, 255, 7, 1, 3, 0, 9, 9}, uint8(1), uint16(20))
	f.Fuzz(func(t *testing.T, data []byte, relative uint8, floorMS uint16) {
		gaps := gapsFromBytes(data)
		rule := StallRule{Relative: 1 + float64(relative)/4, Floor: time.Duration(floorMS) * time.Microsecond * 100}
		if len(gaps) == 0 || len(gaps) > ExactGaps {
			return
		}
		var s Stream
		fill(&s, gaps)
		run, err := NewRun(rule)
		require.NoError(t, err)
		sum, err := run.Record(&s, nil)
		require.NoError(t, err)

		want := ITL{P50: naiveRank(gaps, 500), P90: naiveRank(gaps, 900), P99: naiveRank(gaps, 990), Max: naiveRank(gaps, 1000)}
		require.Equal(t, &want, sum.ITL)
		stalls, thr := naiveStalls(gaps, rule)
		require.Equal(t, stalls, sum.Stalls)
		require.Equal(t, thr, sum.StallThresholdMS)
		require.Equal(t, len(gaps), sum.Gaps)
		require.Equal(t, len(gaps)+1, sum.OutputChunks)
		require.True(t, sum.Exact)

		res, ok := run.Result()
		require.True(t, ok)
		require.Equal(t, RunITL{P50: want.P50, P90: want.P90, P99: want.P99, P999: naiveRank(gaps, 999), Max: want.Max}, res.ITL)
		require.Equal(t, stalls, res.Stalls)
	})
}

// TestExactPercentilesProperty runs the fuzz property over many random
// sequences of every length up to 300, deterministically.
func TestExactPercentilesProperty(t *testing.T) {
	for n := 1; n <= 300; n++ {
		gaps := randomGaps(uint64(n), n)
		var s Stream
		fill(&s, gaps)
		got, err := s.Summary(DefaultStallRule(), nil)
		require.NoError(t, err)
		require.Equal(t, &ITL{P50: naiveRank(gaps, 500), P90: naiveRank(gaps, 900), P99: naiveRank(gaps, 990), Max: naiveRank(gaps, 1000)}, got.ITL, "n=%d", n)
		stalls, _ := naiveStalls(gaps, DefaultStallRule())
		require.Equal(t, stalls, got.Stalls, "n=%d", n)
	}
}

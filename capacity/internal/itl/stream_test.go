package itl

import (
	"errors"
	"testing"
	"time"

	"github.com/anvilbench/anvil/capacity/internal/field"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

const msec = time.Millisecond

// streamOf returns a Stream whose first output event is at 100 ms (the
// TTFO, not a gap) followed by events separated by gaps.
func streamOf(gaps ...time.Duration) *Stream {
	var s Stream
	fill(&s, gaps)
	return &s
}

// fill resets s and adds the events of streamOf.
func fill(s *Stream, gaps []time.Duration) {
	s.Reset()
	at := 100 * msec
	s.Add(at)
	for _, g := range gaps {
		at += g
		s.Add(at)
	}
}

// repeat returns n copies of d.
func repeat(d time.Duration, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

// concat joins gap sequences.
func concat(parts ...[]time.Duration) []time.Duration {
	var out []time.Duration
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func TestStreamSummaryExact(t *testing.T) {
	def := DefaultStallRule()
	tests := []struct {
		name string
		gaps []time.Duration
		rule StallRule
		want Summary
	}{
		{
			name: "one gap",
			gaps: []time.Duration{7 * msec},
			rule: def,
			want: Summary{ITL: &ITL{P50: 7, P90: 7, P99: 7, Max: 7}, OutputChunks: 2, Gaps: 1, StallThresholdMS: 70, Exact: true},
		},
		{
			// 10 gaps 1..10 ms in shuffled order: p50 rank 5, p90 rank 9,
			// p99 rank ceil(9.9) = 10.
			name: "ten gaps",
			gaps: []time.Duration{3 * msec, 9 * msec, 1 * msec, 10 * msec, 2 * msec, 8 * msec, 4 * msec, 7 * msec, 5 * msec, 6 * msec},
			rule: StallRule{Relative: 1.5},
			want: Summary{ITL: &ITL{P50: 5, P90: 9, P99: 10, Max: 10}, OutputChunks: 11, Gaps: 10, Stalls: 3, StallThresholdMS: 7.5, Exact: true},
		},
		{
			// 100 gaps: 98 of 4 ms, one 30 ms, one 60 ms. p99 is rank 99
			// (30 ms); median 4 ms, threshold max(40, 50) = 50 ms.
			name: "hundred gaps",
			gaps: concat(repeat(4*msec, 49), []time.Duration{60 * msec}, repeat(4*msec, 49), []time.Duration{30 * msec}),
			rule: def,
			want: Summary{ITL: &ITL{P50: 4, P90: 4, P99: 30, Max: 60}, OutputChunks: 101, Gaps: 100, Stalls: 1, StallThresholdMS: 50, Exact: true},
		},
		{
			// A gap of exactly the threshold is not a stall; 1 ns more is.
			name: "at and just over the threshold",
			gaps: concat(repeat(10*msec, 5), []time.Duration{100 * msec, 100*msec + 1}),
			rule: def,
			want: Summary{ITL: &ITL{P50: 10, P90: 100.000001, P99: 100.000001, Max: 100.000001}, OutputChunks: 8, Gaps: 7, Stalls: 1, StallThresholdMS: 100, Exact: true},
		},
		{
			// Events stamped in the same instant give zero gaps; the floor
			// keeps the 20 ms one from being a stall.
			name: "zero gaps",
			gaps: []time.Duration{0, 0, 0, 20 * msec},
			rule: def,
			want: Summary{ITL: &ITL{P50: 0, P90: 20, P99: 20, Max: 20}, OutputChunks: 5, Gaps: 4, StallThresholdMS: 50, Exact: true},
		},
		{
			name: "single event: no gap",
			gaps: nil,
			rule: def,
			want: Summary{OutputChunks: 1, StallThresholdMS: 50, Exact: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := streamOf(tt.gaps...).Summary(tt.rule, nil)
			require.NoError(t, err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Summary (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStreamEmpty(t *testing.T) {
	var s Stream
	got, err := s.Summary(DefaultStallRule(), new(5))
	require.NoError(t, err)
	if diff := cmp.Diff(Summary{StallThresholdMS: 50, Exact: true}, got); diff != "" {
		t.Errorf("Summary (-want +got):\n%s", diff)
	}
}

func TestStallRuleOnStreams(t *testing.T) {
	tests := []struct {
		name       string
		gaps       []time.Duration
		rule       StallRule
		wantStalls int
		wantThresh float64
	}{
		{
			// 20x the median is a stall under the default rule.
			name:       "20x median",
			gaps:       concat(repeat(10*msec, 30), []time.Duration{200 * msec}, repeat(10*msec, 30)),
			rule:       DefaultStallRule(),
			wantStalls: 1, wantThresh: 100,
		},
		{
			// 40x the median, but 40 ms is under the 50 ms floor.
			name:       "below floor",
			gaps:       concat(repeat(msec, 30), []time.Duration{40 * msec, 49 * msec, 50 * msec}, repeat(msec, 30)),
			rule:       DefaultStallRule(),
			wantStalls: 0, wantThresh: 50,
		},
		{
			// 2x jitter is not a stall.
			name:       "jitter",
			gaps:       concat(repeat(20*msec, 10), repeat(40*msec, 5), repeat(15*msec, 10)),
			rule:       DefaultStallRule(),
			wantStalls: 0, wantThresh: 200,
		},
		{
			// Override below the relative threshold: 30 ms gaps stall.
			name:       "override wins low",
			gaps:       concat(repeat(10*msec, 20), repeat(31*msec, 3), []time.Duration{200 * msec}),
			rule:       StallRule{Relative: 10, Floor: 50 * msec, Override: 30 * msec},
			wantStalls: 4, wantThresh: 30,
		},
		{
			// Override above the relative threshold: the 200 ms gap no
			// longer stalls, only the 600 ms one.
			name:       "override wins high",
			gaps:       concat(repeat(10*msec, 20), []time.Duration{200 * msec, 600 * msec}),
			rule:       StallRule{Relative: 10, Floor: 50 * msec, Override: 500 * msec},
			wantStalls: 1, wantThresh: 500,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := streamOf(tt.gaps...).Summary(tt.rule, nil)
			require.NoError(t, err)
			require.Equal(t, tt.wantStalls, got.Stalls)
			require.Equal(t, tt.wantThresh, got.StallThresholdMS)
		})
	}
}

func TestTokensPerChunk(t *testing.T) {
	tests := []struct {
		tokens, chunks int
		want           float64
		wantField      string // "" when valid
	}{
		{200, 100, 2, ""},
		{0, 3, 0, ""},
		{7, 2, 3.5, ""},
		{-1, 3, 0, "completion tokens"},
		{5, 0, 0, "output chunks"},
	}
	for _, tt := range tests {
		got, err := TokensPerChunk(tt.tokens, tt.chunks)
		if tt.wantField != "" {
			var ie *field.Error
			require.True(t, errors.As(err, &ie), "TokensPerChunk(%d, %d) error %v", tt.tokens, tt.chunks, err)
			require.Equal(t, tt.wantField, ie.Field)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tt.want, got, "TokensPerChunk(%d, %d)", tt.tokens, tt.chunks)
	}
}

func TestStreamSummaryTokens(t *testing.T) {
	s := streamOf(repeat(4*msec, 9)...) // 10 chunks
	got, err := s.Summary(DefaultStallRule(), new(25))
	require.NoError(t, err)
	require.Equal(t, new(2.5), got.TokensPerChunk)

	got, err = s.Summary(DefaultStallRule(), nil)
	require.NoError(t, err)
	require.Nil(t, got.TokensPerChunk)

	_, err = s.Summary(DefaultStallRule(), new(-3))
	var ie *field.Error
	require.True(t, errors.As(err, &ie), "error %v", err)
	require.Equal(t, "completion tokens", ie.Field)
}

func TestStreamMisordered(t *testing.T) {
	var s Stream
	s.Add(10 * msec)
	s.Add(12 * msec)
	s.Add(11 * msec) // before its predecessor
	s.Add(9 * msec)  // only the first is reported
	_, err := s.Summary(DefaultStallRule(), nil)
	var ie *field.Error
	require.True(t, errors.As(err, &ie), "error %v", err)
	require.EqualError(t, err, "itl: Stream.Add at = 11ms: must not be before the previous output event (event 1 at 12ms)")

	s.Reset()
	s.Add(5 * msec)
	s.Add(6 * msec)
	got, err := s.Summary(DefaultStallRule(), nil)
	require.NoError(t, err, "Reset clears the error")
	require.Equal(t, 1, got.Gaps)
}

func TestStreamInvalidRule(t *testing.T) {
	_, err := streamOf(msec).Summary(StallRule{}, nil)
	var ie *field.Error
	require.True(t, errors.As(err, &ie), "error %v", err)
	require.Equal(t, "StallRule.Relative", ie.Field)
}

func TestStreamReuse(t *testing.T) {
	var s Stream
	fill(&s, repeat(9*msec, 50))
	first, err := s.Summary(DefaultStallRule(), nil)
	require.NoError(t, err)
	require.Equal(t, 51, s.Chunks())
	require.Equal(t, 50, s.Gaps())

	fill(&s, []time.Duration{2 * msec, 3 * msec})
	got, err := s.Summary(DefaultStallRule(), nil)
	require.NoError(t, err)
	want := Summary{ITL: &ITL{P50: 2, P90: 3, P99: 3, Max: 3}, OutputChunks: 3, Gaps: 2, StallThresholdMS: 50, Exact: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after Reset (-want +got):\n%s", diff)
	}
	require.Equal(t, 9.0, first.ITL.Max, "the earlier summary is a copy")
}

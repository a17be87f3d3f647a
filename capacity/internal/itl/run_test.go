package itl

import (
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anvilbench/anvil/capacity/internal/field"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// acceptanceGaps are the 99 gaps of one stream of the acceptance scenario:
// 100 chunks 4 ms apart, except that every 10th gap (10, 20, ..., 90) is an
// 80 ms stall.
func acceptanceGaps() []time.Duration {
	gaps := repeat(4*msec, 99)
	for i := 10; i <= 90; i += 10 {
		gaps[i-1] = 80 * msec
	}
	return gaps
}

// acceptanceWant is the run result of 16 acceptance streams with 2 tokens
// per chunk: 1,584 gaps of which 144 (9.1%) are 80 ms, so p50 and p90 are
// 4 ms and p99, p99.9 and max 80 ms.
var acceptanceWant = ChunkTiming{
	ITL:                RunITL{P50: 4, P90: 4, P99: 80, P999: 80, Max: 80},
	Gaps:               16 * 99,
	Exact:              true,
	Stalls:             16 * 9,
	StallRule:          RuleResult{Relative: 10, FloorMS: 50},
	TokensPerChunkMean: new(2.0),
}

// acceptanceStream is the Summary of each acceptance stream: median 4 ms,
// threshold max(10 x 4, 50) = 50 ms, 9 stalls; p90 is rank 90 (4 ms), p99
// rank 99 (80 ms).
var acceptanceStream = Summary{
	ITL: &ITL{P50: 4, P90: 4, P99: 80, Max: 80}, OutputChunks: 100, Stalls: 9, TokensPerChunk: new(2.0),
	Gaps: 99, StallThresholdMS: 50, Exact: true,
}

func TestRunAcceptance(t *testing.T) {
	run, err := NewRun(DefaultStallRule())
	require.NoError(t, err)
	var s Stream
	for range 16 {
		fill(&s, acceptanceGaps())
		sum, err := run.Record(&s, new(200))
		require.NoError(t, err)
		if diff := cmp.Diff(acceptanceStream, sum); diff != "" {
			t.Fatalf("stream Summary (-want +got):\n%s", diff)
		}
	}
	got, ok := run.Result()
	require.True(t, ok)
	if diff := cmp.Diff(acceptanceWant, got); diff != "" {
		t.Errorf("Result (-want +got):\n%s", diff)
	}
	require.Equal(t, 16, run.Requests())
}

// TestRunAcceptanceConcurrent runs the acceptance scenario as the client
// would: 4 workers on fake time, each streaming 4 requests, stamping each
// output event with its offset from the run's start, each keeping its own
// Stream and Run; the runs are merged at the end.
func TestRunAcceptanceConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		runs := make([]*Run, 4)
		var wg sync.WaitGroup
		for w := range runs {
			run, err := NewRun(DefaultStallRule())
			require.NoError(t, err)
			runs[w] = run
			wg.Go(func() {
				var s Stream
				for range 4 {
					s.Reset()
					time.Sleep(30 * msec) // TTFO
					s.Add(time.Since(start))
					for _, g := range acceptanceGaps() {
						time.Sleep(g)
						s.Add(time.Since(start))
					}
					if _, err := run.Record(&s, new(200)); err != nil {
						t.Errorf("Record: %v", err)
					}
				}
			})
		}
		wg.Wait()
		total, err := NewRun(DefaultStallRule())
		require.NoError(t, err)
		for _, r := range runs {
			require.NoError(t, total.Merge(r))
		}
		got, ok := total.Result()
		require.True(t, ok)
		if diff := cmp.Diff(acceptanceWant, got); diff != "" {
			t.Errorf("merged Result (-want +got):\n%s", diff)
		}
	})
}

func TestRunEmpty(t *testing.T) {
	run, err := NewRun(DefaultStallRule())
	require.NoError(t, err)
	_, ok := run.Result()
	require.False(t, ok, "no stream: chunk_timing is null")

	var s Stream
	s.Add(5 * msec) // a single output event: no gap
	_, err = run.Record(&s, new(3))
	require.NoError(t, err)
	_, ok = run.Result()
	require.False(t, ok, "no gap: chunk_timing is null")
	require.Equal(t, 1, run.Requests())
}

func TestRunTokensPerChunkMean(t *testing.T) {
	run, err := NewRun(DefaultStallRule())
	require.NoError(t, err)
	var s Stream
	for _, tc := range []struct {
		chunks int
		tokens *int
	}{
		{chunks: 4, tokens: new(4)},  // 1
		{chunks: 4, tokens: nil},     // no usage: not in the mean
		{chunks: 2, tokens: new(10)}, // 5
		{chunks: 8, tokens: new(12)}, // 1.5
	} {
		fill(&s, repeat(msec, tc.chunks-1))
		_, err := run.Record(&s, tc.tokens)
		require.NoError(t, err)
	}
	got, ok := run.Result()
	require.True(t, ok)
	require.Equal(t, new(2.5), got.TokensPerChunkMean) // (1 + 5 + 1.5) / 3
	require.Equal(t, 14, got.Gaps)

	none, err := NewRun(DefaultStallRule())
	require.NoError(t, err)
	_, err = none.Record(&s, nil)
	require.NoError(t, err)
	got, ok = none.Result()
	require.True(t, ok)
	require.Nil(t, got.TokensPerChunkMean)
}

func TestRunRecordErrorLeavesRunUnchanged(t *testing.T) {
	run, err := NewRun(DefaultStallRule())
	require.NoError(t, err)
	var s Stream
	fill(&s, []time.Duration{3 * msec, 5 * msec})
	_, err = run.Record(&s, nil)
	require.NoError(t, err)
	before, _ := run.Result()

	var bad Stream
	bad.Add(10 * msec)
	bad.Add(20 * msec)
	bad.Add(15 * msec)
	_, err = run.Record(&bad, nil)
	var ie *field.Error
	require.True(t, errors.As(err, &ie), "misordered: %v", err)

	fill(&s, []time.Duration{90 * msec})
	_, err = run.Record(&s, new(-1))
	require.True(t, errors.As(err, &ie), "negative tokens: %v", err)
	require.Equal(t, "completion tokens", ie.Field)

	after, _ := run.Result()
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("failed Records changed the run (-before +after):\n%s", diff)
	}
	require.Equal(t, 1, run.Requests())
}

func TestNewRunInvalidRule(t *testing.T) {
	_, err := NewRun(StallRule{Relative: 10, Floor: -1})
	var ie *field.Error
	require.True(t, errors.As(err, &ie), "error %v", err)
	require.Equal(t, "StallRule.Floor", ie.Field)
}

func TestRunMergeRuleMismatch(t *testing.T) {
	a, err := NewRun(DefaultStallRule())
	require.NoError(t, err)
	b, err := NewRun(StallRule{Relative: 10, Floor: 50 * msec, Override: time.Second})
	require.NoError(t, err)
	_, err = b.Record(streamOf(msec), nil)
	require.NoError(t, err)
	err = a.Merge(b)
	var ie *field.Error
	require.True(t, errors.As(err, &ie), "error %v", err)
	require.Equal(t, "Run.Merge rule", ie.Field)
	require.Equal(t, 0, a.Requests(), "a failed Merge changes nothing")
	require.Equal(t, DefaultStallRule(), a.Rule())
}

func TestRunMergeExact(t *testing.T) {
	streams := [][]time.Duration{
		{3 * msec, 1 * msec, 4 * msec},
		{1 * msec, 5 * msec, 9 * msec, 2 * msec},
		{6 * msec, 5 * msec, 3 * msec, 5 * msec, 800 * msec},
	}
	all, err := NewRun(DefaultStallRule())
	require.NoError(t, err)
	a, err := NewRun(DefaultStallRule())
	require.NoError(t, err)
	b, err := NewRun(DefaultStallRule())
	require.NoError(t, err)
	var s Stream
	for i, gaps := range streams {
		fill(&s, gaps)
		_, err := all.Record(&s, new(len(gaps)+1))
		require.NoError(t, err)
		part := a
		if i > 0 {
			part = b
		}
		_, err = part.Record(&s, new(len(gaps)+1))
		require.NoError(t, err)
	}
	require.NoError(t, a.Merge(b))
	want, ok := all.Result()
	require.True(t, ok)
	got, ok := a.Result()
	require.True(t, ok)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merged (-all +merged):\n%s", diff)
	}
	// 12 gaps sorted: 1 1 2 3 3 4 5 5 5 6 9 800; p50 rank 6, p90 rank 11.
	require.Equal(t, RunITL{P50: 4, P90: 9, P99: 800, P999: 800, Max: 800}, got.ITL)
	require.Equal(t, 1, got.Stalls)
	require.Equal(t, 3, a.Requests())
	_, ok = b.Result()
	require.True(t, ok, "the merged-in run keeps its own gaps")
	require.Equal(t, 2, b.Requests())
}

// TestRecordIntoReservedRunAllocatesNothing: once a run has reserved room
// for its exact gaps, recording a stream stores them without allocating
// (the Summary's ITL is the one allocation), and once it has spilled,
// neither recording a stream nor merging a sketched run allocates,
// whatever buckets the gaps fall in.
func TestRecordIntoReservedRunAllocatesNothing(t *testing.T) {
	const chunks = 1000
	run, err := NewRun(DefaultStallRule())
	require.NoError(t, err)
	run.Reserve(ExactGaps)
	var s Stream
	gaps := randomGaps(5, chunks)
	record := func() {
		fill(&s, gaps)
		if _, err := run.Record(&s, nil); err != nil {
			t.Fatal(err)
		}
	}
	for run.gaps.count()+2*chunks <= ExactGaps { // AllocsPerRun(1) runs it twice
		require.Equal(t, 1.0, testing.AllocsPerRun(1, record), "allocations of a stream recorded exactly: the Summary's ITL alone")
	}
	for !run.gaps.spilled {
		record() // the sketch's counts are allocated, once
	}
	// Each stream's gaps lie below every earlier one's, in buckets no
	// earlier gap reached, from an hour down to 1 ns.
	longest := time.Hour
	lower := func() {
		s.Reset()
		at := time.Duration(0)
		for range 100 {
			at += longest
			s.Add(at)
		}
		longest = max(longest/3, 1)
		if _, err := run.Record(&s, nil); err != nil {
			t.Fatal(err)
		}
	}
	for longest > 1 {
		require.Equal(t, 1.0, testing.AllocsPerRun(1, lower), "allocations of a stream recorded into the sketch: the Summary's ITL alone")
	}

	other, err := NewRun(DefaultStallRule())
	require.NoError(t, err)
	require.Zero(t, testing.AllocsPerRun(5, func() { require.NoError(t, other.Merge(run)) }), "allocations of merging a sketched run")
}

package itl

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/DataDog/sketches-go/ddsketch"
	ddmapping "github.com/DataDog/sketches-go/ddsketch/mapping"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// The sketch of buckets.go replaced a DDSketch of github.com/DataDog/
// sketches-go v1.4.8, whose buckets the shard artifacts of earlier runs
// store. These tests hold the two to the same output, bit for bit: the
// library stays a test dependency only, for them.

// librarySketch is the gap sketch as this package kept it with the
// library: every gap added in milliseconds, quantiles read by KeyAtRank,
// capped at the exact max.
type librarySketch struct {
	s   *ddsketch.DDSketch
	max time.Duration
}

func newLibrarySketch(t testing.TB) *librarySketch {
	s, err := ddsketch.LogUnboundedDenseDDSketch(RelativeAccuracy)
	require.NoError(t, err)
	return &librarySketch{s: s}
}

func (l *librarySketch) add(t testing.TB, d time.Duration) {
	require.NoError(t, l.s.Add(ms(d)))
	l.max = max(l.max, d)
}

// at is the gap of 1-based rank r, as gapSet.at read it from the library.
func (l *librarySketch) at(r int) float64 {
	k := float64(r-1) - l.s.GetZeroCount()
	if k < 0 {
		return 0
	}
	return min(l.s.Value(l.s.GetPositiveValueStore().KeyAtRank(k)), ms(l.max))
}

// above counts the gaps over threshold ns, as gapSet.above did.
func (l *librarySketch) above(threshold float64) int {
	if float64(l.max) <= threshold {
		return 0
	}
	var count float64
	l.s.ForEach(func(value, c float64) bool {
		if value > threshold/1e6 {
			count += c
		}
		return false
	})
	return int(count)
}

// bins is the library's positive store as the artifact stores it.
func (l *librarySketch) bins() map[int]int {
	out := make(map[int]int)
	l.s.GetPositiveValueStore().ForEach(func(index int, count float64) bool {
		out[index] = int(count)
		return false
	})
	return out
}

// requireSameSketch fails unless g (spilled) and l hold the same buckets
// and answer every rank and the given thresholds alike, bit for bit.
func requireSameSketch(t *testing.T, g *gapSet, l *librarySketch, thresholds ...float64) {
	t.Helper()
	require.True(t, g.spilled)
	got := g.sketch
	require.Equal(t, int(l.s.GetZeroCount()), got.zero, "zero gaps")
	bins := make(map[int]int)
	got.each(func(index, count int) { bins[index] = count })
	if diff := cmp.Diff(l.bins(), bins); diff != "" {
		t.Fatalf("buckets (-library +buckets.go):\n%s", diff)
	}
	for r := 1; r <= g.count(); r++ {
		if want, have := l.at(r), g.at(r); math.Float64bits(want) != math.Float64bits(have) {
			t.Fatalf("rank %d of %d: library %v, buckets.go %v", r, g.count(), want, have)
		}
	}
	for _, thr := range thresholds {
		require.Equal(t, l.above(thr), g.above(thr), "gaps above %v ns", thr)
	}
}

// TestMappingMatchesLibrary: index and value agree with the library's
// LogarithmicMapping on every bucket a duration can reach, on both sides
// of every bucket boundary, and on random durations over the whole range.
func TestMappingMatchesLibrary(t *testing.T) {
	lib, err := ddmapping.NewLogarithmicMapping(RelativeAccuracy)
	require.NoError(t, err)
	lowest, highest := mapping.index(ms(1)), mapping.index(ms(math.MaxInt64))
	require.Equal(t, lib.Index(ms(1)), lowest)
	require.Equal(t, lib.Index(ms(math.MaxInt64)), highest)
	for i := lowest - 1; i <= highest+1; i++ {
		v := lib.Value(i)
		require.Equal(t, math.Float64bits(v), math.Float64bits(mapping.value(i)), "value(%d)", i)
		for _, x := range []float64{lib.LowerBound(i), math.Nextafter(lib.LowerBound(i), 0), math.Nextafter(lib.LowerBound(i), math.Inf(1)), v} {
			require.Equal(t, lib.Index(x), mapping.index(x), "index(%v)", x)
		}
	}
	rng := rand.New(rand.NewPCG(26, 3))
	for range 200000 {
		d := time.Duration(math.Exp(rng.Float64() * math.Log(math.MaxInt64)))
		require.Equal(t, lib.Index(ms(d)), mapping.index(ms(d)), "index of %v", d)
	}
	require.Equal(t, math.Float64bits(lib.RelativeAccuracy()), math.Float64bits(mapping.accuracy))
}

// TestBucketsMatchLibrary: runs that spill, alone or merged, hold what the
// library held and answer every rank and stall count as it did, on gaps
// with zeros, repeats, stalls and the extremes of a duration.
func TestBucketsMatchLibrary(t *testing.T) {
	extremes := []time.Duration{0, 1, 2, 999, time.Microsecond, time.Hour, math.MaxInt64}
	for i, gaps := range [][]time.Duration{
		randomGaps(61, ExactGaps+1),
		randomGaps(62, 3*ExactGaps+777),
		concat(repeat(0, ExactGaps), repeat(5*msec, 3)),
		concat(randomGaps(63, ExactGaps), extremes),
	} {
		var g gapSet
		l := newLibrarySketch(t)
		for _, d := range gaps {
			g.add(d)
			l.add(t, d)
		}
		g.prepare()
		requireSameSketch(t, &g, l, 0, 1, 50e6, float64(10*msec), float64(time.Second), float64(math.MaxInt64))

		// The same gaps in two runs merged, exact into sketched and
		// sketched into sketched.
		cut := []int{10, ExactGaps / 2, len(gaps) - 3, len(gaps) / 2}[i]
		var a, b gapSet
		for _, d := range gaps[:cut] {
			a.add(d)
		}
		for _, d := range gaps[cut:] {
			b.add(d)
		}
		a.merge(&b)
		a.prepare()
		requireSameSketch(t, &a, l, 50e6)
	}
}

// TestStoredBucketsMatchLibrary: a sketch stored as the artifact's
// distribution and added back
// holds the library's buckets.
func TestStoredBucketsMatchLibrary(t *testing.T) {
	gaps := randomGaps(64, 2*ExactGaps)
	l := newLibrarySketch(t)
	for _, d := range gaps {
		l.add(t, d)
	}
	stored := recordAll(t, split(gaps, 1000)).Distribution()
	require.NotNil(t, stored.Sketch)
	require.Equal(t, l.bins(), stored.Sketch.Bins)
	run, err := NewRun(DefaultStallRule())
	require.NoError(t, err)
	require.NoError(t, run.AddDistribution(stored))
	run.gaps.prepare()
	requireSameSketch(t, &run.gaps, l, 50e6)
}

// FuzzBucketsMatchLibrary: on arbitrary gaps (2 bytes each, 0..65,535 µs,
// scaled by a power of ten up to seconds) the sketch answers every rank as
// the library does.
func FuzzBucketsMatchLibrary(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 255, 255, 7, 1}, uint8(0))
	f.Add([]byte{4, 0, 4, 0, 4, 0, 80, 0, 4, 0}, uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, scale uint8) {
		unit := time.Duration(math.Pow10(int(scale % 7))) // 1 ns .. 1 ms
		var g gapSet
		g.spill() // an empty sketch: every gap goes to the buckets
		l := newLibrarySketch(t)
		for i := 0; i+1 < len(data); i += 2 {
			d := time.Duration(binary.LittleEndian.Uint16(data[i:])) * unit
			g.addSketched(d)
			l.add(t, d)
		}
		if g.count() == 0 {
			return
		}
		requireSameSketch(t, &g, l, float64(unit), 50e6)
	})
}

// BenchmarkSketchAdd compares one sketched gap in this package's buckets
// and in the library's sketch, in one run: gaps of 0.5..200 ms.
func BenchmarkSketchAdd(b *testing.B) {
	gaps := randomGaps(65, 4096)
	b.Run("buckets", func(b *testing.B) {
		var s buckets
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			s.add(gaps[i%len(gaps)])
		}
	})
	b.Run("library", func(b *testing.B) {
		l := newLibrarySketch(b)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if err := l.s.Add(ms(gaps[i%len(gaps)])); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSketchMerge compares merging one worker's sketch of 100,000
// gaps into an emptied total, in this package's buckets and in the
// library's sketch, in one run.
func BenchmarkSketchMerge(b *testing.B) {
	gaps := randomGaps(66, 100000)
	b.Run("buckets", func(b *testing.B) {
		var part, total buckets
		for _, d := range gaps {
			part.add(d)
		}
		b.ReportAllocs()
		for b.Loop() {
			total.reset()
			total.merge(&part)
		}
	})
	b.Run("library", func(b *testing.B) {
		part, total := newLibrarySketch(b), newLibrarySketch(b)
		for _, d := range gaps {
			part.add(b, d)
		}
		b.ReportAllocs()
		for b.Loop() {
			total.s.Clear()
			if err := total.s.MergeWith(part.s); err != nil {
				b.Fatal(err)
			}
		}
	})
}

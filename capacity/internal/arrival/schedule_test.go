package arrival

import (
	"crypto/sha256"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// goldenSpecs are the schedules testdata/schedules.golden pins.
var goldenSpecs = []Spec{
	{Process: Constant, Rate: 3, Seed: 1},
	{Process: Poisson, Rate: 10, Seed: 1},
	{Process: Poisson, Rate: 10, Seed: 2},
	{Process: Poisson, Rate: 0.5, Seed: -7},
	{Process: Gamma, Rate: 10, Burstiness: 0.25, Seed: 1},
	{Process: Gamma, Rate: 10, Burstiness: 4, Seed: 1},
	{Process: Gamma, Rate: 1000, Burstiness: 0.01, Seed: 42},
	{Process: Gamma, Rate: 2.5, Burstiness: 100, Seed: 42},
}

// goldenText renders, for each spec, its first 20 offsets in nanoseconds
// and the SHA-256 of its first 100,000 offsets as little-endian int64s,
// so a change anywhere in a long schedule shows.
func goldenText(t *testing.T) string {
	var b strings.Builder
	b.WriteString("# The first 20 offsets (ns) of each spec, and the SHA-256 of its first\n")
	b.WriteString("# 100000 offsets as little-endian int64. go test -update rewrites this file.\n")
	for _, s := range goldenSpecs {
		offsets, err := Schedule(s, 100_000)
		require.NoError(t, err, "%+v", s)
		fmt.Fprintf(&b, "\nprocess=%s rate=%g burstiness=%g seed=%d\n", s.Process, s.Rate, s.Burstiness, s.Seed)
		for _, d := range offsets[:20] {
			fmt.Fprintf(&b, "%d\n", int64(d))
		}
		h := sha256.New()
		for _, d := range offsets {
			h.Write(binary.LittleEndian.AppendUint64(nil, uint64(d)))
		}
		fmt.Fprintf(&b, "sha256(100000)=%x\n", h.Sum(nil))
	}
	return b.String()
}

// TestGolden pins the schedules bit for bit. A difference means every
// recorded run with these specs would now send at other times: fix the
// code, or, for an intended change, rerun with -update and say so.
func TestGolden(t *testing.T) {
	path := filepath.Join("testdata", "schedules.golden")
	got := goldenText(t)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Empty(t, cmp.Diff(string(want), got), "schedules changed (-want +got)")
}

func TestScheduleIsPure(t *testing.T) {
	for _, s := range goldenSpecs {
		a, err := Schedule(s, 5000)
		require.NoError(t, err)
		b, err := Schedule(s, 5000)
		require.NoError(t, err)
		require.Empty(t, cmp.Diff(a, b), "%+v: two calls differ", s)

		// A shorter schedule is a prefix of a longer one.
		short, err := Schedule(s, 100)
		require.NoError(t, err)
		require.Empty(t, cmp.Diff(a[:100], short), "%+v", s)
	}
}

func TestSeedsDiffer(t *testing.T) {
	for _, s := range []Spec{
		{Process: Poisson, Rate: 10},
		{Process: Gamma, Rate: 10, Burstiness: 0.5},
		{Process: Gamma, Rate: 10, Burstiness: 3},
	} {
		seen := map[string]int64{}
		for _, seed := range []int64{0, 1, 2, 3, -1, 1 << 40, -1 << 63} {
			s.Seed = seed
			offsets, err := Schedule(s, 50)
			require.NoError(t, err)
			key := fmt.Sprint(offsets)
			prev, dup := seen[key]
			require.False(t, dup, "%s: seeds %d and %d give the same schedule", s.Process, prev, seed)
			seen[key] = seed
		}
	}
}

func TestConstantIgnoresSeed(t *testing.T) {
	a, err := Schedule(Spec{Process: Constant, Rate: 7, Seed: 1}, 100)
	require.NoError(t, err)
	b, err := Schedule(Spec{Process: Constant, Rate: 7, Seed: 99}, 100)
	require.NoError(t, err)
	require.Empty(t, cmp.Diff(a, b))
}

// TestConstantOffsets checks the constant schedule against its closed
// form, round(i * 10^9/rate) ns, which summing the unit draws as exact
// integers guarantees.
func TestConstantOffsets(t *testing.T) {
	for _, rate := range []float64{MinRate, 0.3, 1, 3, 7, 50, 999.5, MaxRate} {
		offsets, err := Schedule(Spec{Process: Constant, Rate: rate}, 10_000)
		require.NoError(t, err)
		for i, d := range offsets {
			want := time.Duration(math.Round(float64(float64(i) * (1e9 / rate))))
			require.Equal(t, want, d, "rate %g, offset %d", rate, i)
		}
	}
}

// TestGammaOneIsPoisson checks the documented identity: burstiness 1 (or
// 0, its default) draws exactly the Poisson schedule.
func TestGammaOneIsPoisson(t *testing.T) {
	for _, seed := range []int64{1, 2, 3} {
		p, err := Schedule(Spec{Process: Poisson, Rate: 20, Seed: seed}, 1000)
		require.NoError(t, err)
		for _, b := range []float64{0, 1} {
			g, err := Schedule(Spec{Process: Gamma, Rate: 20, Burstiness: b, Seed: seed}, 1000)
			require.NoError(t, err)
			require.Empty(t, cmp.Diff(p, g), "seed %d, burstiness %g", seed, b)
		}
	}
}

func TestScheduleShape(t *testing.T) {
	for _, n := range []int{0, 1, 2, 1000} {
		for _, s := range goldenSpecs {
			offsets, err := Schedule(s, n)
			require.NoError(t, err)
			require.NotNil(t, offsets)
			require.Len(t, offsets, n)
			checkOffsets(t, offsets)
		}
	}
}

// checkOffsets asserts the invariants of every schedule: the first offset
// is 0 and the offsets never decrease.
func checkOffsets(t testing.TB, offsets []time.Duration) {
	t.Helper()
	if len(offsets) > 0 && offsets[0] != 0 {
		t.Fatalf("first offset %v, want 0", offsets[0])
	}
	for i := 1; i < len(offsets); i++ {
		if offsets[i] < offsets[i-1] {
			t.Fatalf("offset %d = %v is before offset %d = %v", i, offsets[i], i-1, offsets[i-1])
		}
	}
}

// TestOffsetsCustomProcess schedules a ProcessFunc: offsets are the
// running sums of its draws over the rate.
func TestOffsetsCustomProcess(t *testing.T) {
	draws := []float64{0.5, 2, 0, 1.25}
	i := 0
	p := ProcessFunc(func(*rand.Rand) float64 { x := draws[i]; i++; return x })
	got, err := Offsets(p, 4, NewRand(0), 5)
	require.NoError(t, err)
	want := []time.Duration{0, 125 * time.Millisecond, 625 * time.Millisecond, 625 * time.Millisecond, 937500 * time.Microsecond}
	require.Empty(t, cmp.Diff(want, got))
	require.Equal(t, 4, i, "n offsets take n-1 draws")
}

// TestNewRand checks the documented seeding.
func TestNewRand(t *testing.T) {
	for _, seed := range []int64{0, 1, -1, 1 << 62} {
		want := rand.New(rand.NewPCG(uint64(seed), 0x6172726976616c73))
		got := NewRand(seed)
		for range 10 {
			require.Equal(t, want.Uint64(), got.Uint64(), "seed %d", seed)
		}
	}
	require.Equal(t, "arrivals", string(binary.BigEndian.AppendUint64(nil, seedStream)))
}

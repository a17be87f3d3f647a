package contextdraw

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// TestSampleContextsSeed1717: the contexts the reference tool attempts for
// seed 1717: one draw of Python's random.Random(1717).random() per
// request, mapped to buckets.
func TestSampleContextsSeed1717(t *testing.T) {
	require.Equal(t, []int{65536, 32768, 131072, 16000, 32768, 65536, 32768, 32768}, Sample(1717, 8))
}

func TestSampleContextsVectors(t *testing.T) {
	tests := []struct {
		seed int64
		want []int
	}{
		{1717, []int{65536, 32768, 131072, 16000, 32768, 65536, 32768, 32768}},
		{0, []int{65536, 65536, 32768, 32768, 32768, 32768, 65536, 32768}},
		{-3, []int{32768, 32768, 32768, 65536, 65536, 16000, 16000, 65536}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.seed), func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Sample(tt.seed, len(tt.want))); diff != "" {
				t.Errorf("Sample(%d) (-want +got):\n%s", tt.seed, diff)
			}
		})
	}
}

// goldenContexts is testdata/contexts.json, written by gen_contexts.py from
// CPython's random module.
type goldenContexts struct {
	Generator string `json:"generator"`
	Cases     []struct {
		Seed       int64     `json:"seed"`
		N          int       `json:"n"`
		FirstDraws []float64 `json:"first_draws"`
		Contexts   []int     `json:"contexts"`
	} `json:"cases"`
}

func TestSampleContextsGolden(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "contexts.json"))
	require.NoError(t, err)
	var g goldenContexts
	require.NoError(t, json.Unmarshal(data, &g))
	require.NotEmpty(t, g.Cases)
	seen := map[int64]bool{}
	for _, c := range g.Cases {
		seen[c.Seed] = true
		t.Run(fmt.Sprintf("seed=%d/n=%d", c.Seed, c.N), func(t *testing.T) {
			require.Len(t, c.Contexts, c.N)
			r := newPyRandom(c.Seed)
			for i, want := range c.FirstDraws {
				got := r.float64()
				if math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("draw %d = %v (%#x), want %v (%#x)", i, got, math.Float64bits(got), want, math.Float64bits(want))
				}
			}
			if diff := cmp.Diff(c.Contexts, Sample(c.Seed, c.N)); diff != "" {
				t.Errorf("Sample (-want +got):\n%s", diff)
			}
		})
	}
	// The table must keep the edge seeds this test exists for.
	for _, s := range []int64{0, -3, 1 << 32, math.MaxInt64, math.MinInt64} {
		require.True(t, seen[s], "contexts.json lacks seed %d", s)
	}
}

func TestSampleContextsEdges(t *testing.T) {
	require.Nil(t, Sample(1, 0))
	require.Nil(t, Sample(1, -5))
	// A seed and its negation draw the same (Python seeds with |seed|).
	require.Equal(t, Sample(99, 50), Sample(-99, 50))
	// A prefix of a longer plan is the shorter plan.
	require.Equal(t, Sample(7, 10), Sample(7, 100)[:10])
}

func TestContextForDrawBounds(t *testing.T) {
	tests := []struct {
		u    float64
		want int
	}{
		{0, Bucket16K},
		{0.218, Bucket16K},
		{math.Nextafter(0.218, 1), Bucket32K},
		{0.602, Bucket32K},
		{math.Nextafter(0.602, 1), Bucket64K},
		{0.906, Bucket64K},
		{math.Nextafter(0.906, 1), Bucket128K},
		{0.995, Bucket128K},
		{math.Nextafter(0.995, 1), BucketTop},
		{math.Nextafter(1, 0), BucketTop},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, ForDraw(tt.u), "u = %v", tt.u)
	}
}

func BenchmarkSampleContexts(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Sample(1717, 16_384) // the most requests a capacity run plans
	}
}

package budget

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNext: the first guess and its cuts, the curve's guess and its
// growth bound, the bound of a cut prompt, and the least prompt.
func TestNext(t *testing.T) {
	none := math.MaxInt
	tests := []struct {
		name                      string
		pts                       []Point
		c, first, hi, step, least int
		want                      int
	}{
		{"first guess", nil, 1000, 3000, none, 0, 10, 3000},
		{"first guess after two cuts", nil, 1000, 3200, none, 2, 10, 200},
		{"first guess below the least prompt", nil, 1000, 3000, none, 3, 100, 100},
		{"on the curve", []Point{{1000, 400}, {3000, 1200}}, 1000, 0, none, 1, 10, 2500},
		{"grown at most Growth-fold", []Point{{100, 40}}, 10000, 0, none, 1, 10, 400},
		{"halfway below a cut prompt", []Point{{1000, 400}}, 1000, 0, 2000, 1, 10, 1500},
		{"halfway to a cut prompt with nothing believed", nil, 1000, 3000, 1000, 0, 10, 500},
		{"never zero", nil, 1, 1, none, 5, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Next(tt.pts, tt.c, tt.first, tt.hi, tt.step, tt.least))
		})
	}
}

// TestBisect: halfway between the bracket's ends, bounded by a cut
// prompt, and no prompt when the bracket is closed or open above.
func TestBisect(t *testing.T) {
	pts := []Point{{1000, 400}, {1100, 402}, {3000, 1200}}
	got, ok := Bisect(pts, 401, math.MaxInt)
	require.True(t, ok)
	require.Equal(t, 1050, got)
	got, ok = Bisect(pts, 1100, 2000)
	require.True(t, ok)
	require.Equal(t, 1550, got, "the shortest counting more is above the cut prompt")
	_, ok = Bisect([]Point{{1000, 400}, {1001, 402}}, 401, math.MaxInt)
	require.False(t, ok, "no prompt between 1000 and 1001")
	_, ok = Bisect([]Point{{1000, 400}}, 500, math.MaxInt)
	require.False(t, ok, "nothing counted more")
}

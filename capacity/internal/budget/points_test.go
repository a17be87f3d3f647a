package budget

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCharsFor: the inversion of the calibration curve, inside a segment,
// beyond the ends and with one point.
func TestCharsFor(t *testing.T) {
	pts := []Point{{3000, 1300}, {2300, 1000}, {9000, 4000}}
	tests := []struct{ tokens, want int }{
		{1000, 2300}, {1300, 3000}, {1150, 2650}, {4000, 9000}, {2650, 6000}, {5000, 11222}, {500, 1133},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, CharsFor(pts, tt.tokens), "tokens %d", tt.tokens)
	}
	require.Equal(t, 4600, CharsFor([]Point{{2300, 1000}}, 2000), "one point: through the origin")
	require.Equal(t, 4600, CharsFor([]Point{{2300, 1000}, {2301, 1000}}, 2000), "one distinct count")
}

// TestCheck: the rules of what calibration believes, point by point.
func TestCheck(t *testing.T) {
	pts := []Point{{3000, 1000}}
	tests := []struct {
		p    Point
		want string // "" believed
	}{
		{Point{Chars: 6000, Tokens: 2000}, ""},
		{Point{Chars: 3003, Tokens: 999}, ""}, // one character more may merge tokens
		{Point{Chars: 6000, Tokens: 0}, "want a positive count"},
		{Point{Chars: 60000, Tokens: 5000}, "above the plausible"},
		{Point{Chars: 6000, Tokens: 990}, "moved the wrong way"},
		{Point{Chars: 6000, Tokens: 1000}, "did not grow"},
		{Point{Chars: 6000, Tokens: 8000}, "outside the plausible"},
		{Point{Chars: 1000, Tokens: 1500}, "moved the wrong way"},
	}
	for _, tt := range tests {
		err := Check(pts, tt.p)
		if tt.want == "" {
			require.NoError(t, err, "%v", tt.p)
			continue
		}
		require.ErrorContains(t, err, tt.want, "%v", tt.p)
	}
}

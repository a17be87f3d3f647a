package legacychunk

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDecode: one object, white space around it allowed; anything else is
// ErrNotObject, ErrTrailingData or encoding/json's error.
func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		data string
		err  error
	}{
		{" {\"a\":1}\n", nil},
		{"", ErrNotObject},
		{"[]", ErrNotObject},
		{"null", ErrNotObject},
		{"{} {}", ErrTrailingData},
		{"{}x", ErrTrailingData},
	} {
		var v map[string]any
		require.Equal(t, tc.err, Decode([]byte(tc.data), &v), "%q", tc.data)
	}
	var v map[string]any
	var syntax *json.SyntaxError
	require.ErrorAs(t, Decode([]byte(`{"a":}`), &v), &syntax)
}

// TestLeaves: each leaf type's reading of every kind of JSON value.
func TestLeaves(t *testing.T) {
	var leaves struct {
		S []String   `json:"s"`
		N []NonEmpty `json:"n"`
		I []Int      `json:"i"`
	}
	require.NoError(t, Decode([]byte(`{
		"s": ["plain", "esc\u00e9\n", null, 1, {"a":1}, ""],
		"n": ["x", "", null, 0, true],
		"i": [12, "12", -1, 24.0, 1e3, 9223372036854775808, null, true, "x"]
	}`), &leaves))
	require.Equal(t, []String{"plain", "esc\u00e9\n", "", "", "", ""}, leaves.S)
	require.Equal(t, []NonEmpty{true, false, false, false, false}, leaves.N)
	require.Equal(t, []Int{{12, true}, {12, true}, {-1, true}, {}, {}, {9223372036854775807, false}, {}, {}, {}}, leaves.I)
}

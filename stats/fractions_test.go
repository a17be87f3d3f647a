package stats

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// TestSummarizeMatchesFractions compares Summarize bit for bit with an
// independent oracle: testdata/gen_fractions.py computes every statistic in
// Python with fractions.Fraction and math.fsum and writes the results as
// hexadecimal floats to testdata/fractions.golden.json.
func TestSummarizeMatchesFractions(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "fractions.golden.json"))
	require.NoError(t, err)
	var cases []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(data, &cases))
	require.Len(t, cases, 66)
	hexFloat := func(raw json.RawMessage) float64 {
		if raw == nil {
			return math.NaN() // undefined: absent from the golden file
		}
		var s string
		require.NoError(t, json.Unmarshal(raw, &s))
		f, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err, s)
		return f
	}
	for i, c := range cases {
		var hexes []string
		require.NoError(t, json.Unmarshal(c["samples"], &hexes))
		xs := make([]float64, len(hexes))
		for j, h := range hexes {
			xs[j] = hexFloat(json.RawMessage(strconv.Quote(h)))
		}
		var n int
		require.NoError(t, json.Unmarshal(c["n"], &n))
		want := Summary{N: n, Mean: hexFloat(c["mean"]), Stddev: hexFloat(c["stddev"]),
			CI95Low: hexFloat(c["ci95_low"]), CI95High: hexFloat(c["ci95_high"]),
			Min: hexFloat(c["min"]), P25: hexFloat(c["p25"]), P50: hexFloat(c["p50"]), P75: hexFloat(c["p75"]),
			P90: hexFloat(c["p90"]), P95: hexFloat(c["p95"]), P99: hexFloat(c["p99"]), Max: hexFloat(c["max"])}
		if diff := cmp.Diff(want, Summarize(xs), cmp.Comparer(sameFloat)); diff != "" {
			t.Errorf("case %d (%d samples) differs from the Fraction oracle (-python +go):\n%s", i, len(xs), diff)
		}
	}
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRefusesMetricsTheRowsContradict: an artifact whose stored
// metrics.ttft_p50_ms is not its rows' is refused by summary, bench, html
// and compare, naming the metric and both values, as merge refuses it.
func TestRefusesMetricsTheRowsContradict(t *testing.T) {
	seed := "../../../testdata/seed-capacity-v4-reasoning.json"
	data, err := os.ReadFile(seed)
	require.NoError(t, err)
	const stored = `"ttft_p50_ms": 8953.168000000005`
	require.Equal(t, 1, strings.Count(string(data), stored), "the seed's ttft_p50_ms")
	forged := filepath.Join(t.TempDir(), "forged.json")
	require.NoError(t, os.WriteFile(forged, bytes.Replace(data, []byte(stored), []byte(`"ttft_p50_ms": 12.5`), 1), 0o644))
	const want = "the stored metrics contradict the request rows: metrics.ttft_p50_ms is 12.5, the rows give 8953.168000000005"
	for _, tc := range []struct {
		args []string
		code int // compare: 2 for an artifact it cannot read
	}{
		{[]string{"summary", forged}, 1},
		{[]string{"bench", forged}, 1},
		{[]string{"html", "-o", filepath.Join(t.TempDir(), "r.html"), forged}, 1},
		{[]string{"compare", seed, forged}, 2},
	} {
		args := tc.args
		var stdout, stderr bytes.Buffer
		code := run(args, &stdout, &stderr)
		require.Equal(t, tc.code, code, "%v: %s", args, stderr.String())
		require.Contains(t, stderr.String(), forged, args)
		require.Contains(t, stderr.String(), want, args)
	}
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"summary", seed}, &stdout, &stderr), stderr.String())
}

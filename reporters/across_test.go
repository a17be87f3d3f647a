package reporters

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/stats"
)

// TestWriteAcross: three runs of one workload get the mean and 95%
// t-interval of each headline metric across them; a run of another
// workload is not mixed in, and alone prints nothing.
func TestWriteAcross(t *testing.T) {
	runs := []*artifact.Report{syntheticRun(t, 60, 4, 1), syntheticRun(t, 60, 4, 2), syntheticRun(t, 60, 8, 3), syntheticRun(t, 60, 4, 4)}
	var buf bytes.Buffer
	require.NoError(t, WriteAcross(&buf, runs, []string{"a.json", "b.json", "c.json", "d.json"}))
	out := buf.String()
	require.True(t, strings.HasPrefix(out, "== across 3 runs of one workload: a.json, b.json, d.json\n"), out)
	require.NotContains(t, out, "c.json")
	require.Contains(t, out, "(95% t-interval of the mean across runs: mean ± t(0.975, n-1) · s / sqrt(n))\n")

	var p50 []float64
	for _, r := range []*artifact.Report{runs[0], runs[1], runs[3]} {
		p50 = append(p50, *r.Metrics.TTFT.P50)
	}
	mean, lo, hi := stats.TInterval95(p50)
	line := fmt.Sprintf("TTFT p50  ms  3  %s  %s  %s  lower", num(&mean), num(&lo), num(&hi))
	require.Contains(t, strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(line), " "), out)
	// No run has a steady window: the row is there, with no sample.
	require.Contains(t, strings.Join(strings.Fields(out), " "), "steady output tok/s 0 - - - higher")

	buf.Reset()
	require.NoError(t, WriteAcross(&buf, runs[2:3], []string{"c.json"}))
	require.Empty(t, buf.String(), "one run of a workload has no interval")
	require.Error(t, WriteAcross(&buf, runs, []string{"a.json"}))
}

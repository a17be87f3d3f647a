package artifact

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCheckMetrics: the seed's metrics are its rows'; a stored metric
// changed by hand, or a row changed under the stored metrics, is named
// with both values; an artifact without rows has nothing to check.
func TestCheckMetrics(t *testing.T) {
	r, _ := readFile(t, seedPath)
	require.NoError(t, r.CheckMetrics())

	forged, _ := readFile(t, seedPath)
	*forged.Metrics.TTFT.P50 += 1
	err := forged.CheckMetrics()
	require.ErrorIs(t, err, errMetricsContradictRows)
	require.Regexp(t, `^the stored metrics contradict the request rows: metrics\.ttft_p50_ms is [0-9.e+-]+, the rows give [0-9.e+-]+$`, err.Error())
	require.NoError(t, r.CheckMetrics(), "the check changes nothing")

	moved, _ := readFile(t, seedPath)
	moved.RequestTimings[0].E2EMS += 1000
	err = moved.CheckMetrics()
	require.ErrorIs(t, err, errMetricsContradictRows)
	require.Contains(t, err.Error(), "metrics.e2e_")

	bad, _ := readFile(t, seedPath)
	bad.RequestTimings[0].TTFTMS = bad.RequestTimings[0].E2EMS + 1
	require.ErrorIs(t, bad.CheckMetrics(), errMetricsContradictRows, "a row that breaks ttft <= e2e")
}

// TestCheckMetricsCorpus: every corpus artifact passes, those without
// rows (older than capacity-v3) having nothing to check.
func TestCheckMetricsCorpus(t *testing.T) {
	without := 0
	for _, f := range corpusFiles(t) {
		r, _ := readFile(t, f)
		require.NoError(t, r.CheckMetrics(), f)
		if !r.shape.has("request_timings") {
			without++
		}
	}
	require.Positive(t, without, "the corpus has artifacts without rows")
}

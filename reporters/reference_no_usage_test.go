package reporters

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBenchWriterReferenceNoUsage: a reference artifact of a server
// without usage (null token counts, written by
// testdata/gen_reference_no_usage.py) converts to benchfmt with its
// latencies and without any token-derived value it cannot know.
func TestBenchWriterReferenceNoUsage(t *testing.T) {
	rep := loadReport(t, filepath.Join("..", "testdata", "reference-no-usage-capacity-v3.json"))
	var buf bytes.Buffer
	require.NoError(t, writeBenchfmt(&buf, rep))
	p := parseBench(t, buf.Bytes())
	require.Empty(t, p.errs)
	require.Len(t, p.results, 1)
	res := p.results[0]
	require.Equal(t, 4, res.Iters)
	values := benchValueMap(res)
	require.Equal(t, *rep.Metrics.TTFT.P50, values[unitTTFTP50])
	require.Equal(t, *rep.Metrics.E2E.P50, values[unitE2EP50])
	for _, unit := range []string{unitOutputThroughput, unitTPOT, unitDecode, unitPrefill} {
		require.NotContains(t, values, unit, "no usage, no %s", unit)
	}
}

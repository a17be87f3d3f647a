package reporters

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// TestChunkTimingUnits: itl-p99-ms and tokens/chunk are reported only when
// the artifact measured chunk timing, with its values, after the v1 units;
// the summary shows ITL p50/p99, stalls and tokens per chunk.
func TestChunkTimingUnits(t *testing.T) {
	units := func(r *artifact.Report) map[string]float64 {
		m := map[string]float64{}
		for _, v := range benchValues(r) {
			m[v.Unit] = v.Value
		}
		return m
	}
	r := loadReport(t, seedPath)
	require.NotContains(t, units(r), unitITLP99, "the seed has no anvil_go")
	var buf bytes.Buffer
	require.NoError(t, WriteSummary(&buf, r))
	require.NotContains(t, buf.String(), "ITL")

	r.AnvilGo = &artifact.Extension{Version: 1, ChunkTiming: &artifact.ChunkTiming{
		ITLMS: artifact.Quantiles{P50: 4, P90: 4, P99: 80, P999: 80, Max: 80}, Gaps: 1584, Exact: true, Stalls: 144,
	}}
	got := units(r)
	require.Equal(t, 80.0, got[unitITLP99])
	require.NotContains(t, got, unitTokensPerChunk, "null without usage")
	tpc := 2.0
	r.AnvilGo.ChunkTiming.TokensPerChunkMean = &tpc
	got = units(r)
	require.Equal(t, 2.0, got[unitTokensPerChunk])
	vs := benchValues(r)
	require.Equal(t, unitTokensPerChunk, vs[len(vs)-1].Unit, "appended after the v1 units")
	require.Equal(t, unitITLP99, vs[len(vs)-2].Unit)

	buf.Reset()
	require.NoError(t, WriteSummary(&buf, r))
	require.Contains(t, buf.String(), "ITL p50 4.00 ms  p99 80.0 ms  max 80.0 ms  stalls 144  tokens per chunk 2.00\n")
}

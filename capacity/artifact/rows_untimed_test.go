package artifact

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// embeddingsReport is a run of three embeddings answers: latency and input
// tokens, no token times.
func embeddingsReport() *Report {
	r := &Report{Schema: Schema, Requests: 3, WallClockMS: 300, Completed: 3}
	for i, e2e := range []float64{40, 60, 50} {
		row := TimingRow{RequestIndex: i, PlannedContextTokens: 512, PromptTokens: new(500), OutputTokenSource: SourceUsage, E2EMS: e2e}
		row.OmitTokenTimes()
		r.RequestTimings = append(r.RequestTimings, row)
	}
	return r
}

// TestRowsWithoutTokenTimes: a row without token times writes none of
// them, reads back without them, and leaves the time-to-token
// distributions empty (absent, not zero) while E2E and the prompt tokens
// are the answers'.
func TestRowsWithoutTokenTimes(t *testing.T) {
	r := embeddingsReport()
	require.NoError(t, r.Recompute())
	for _, d := range []Distribution{r.Metrics.TTFT, r.Metrics.TimeToFirstOutput, r.Metrics.Generation, r.Metrics.TPOT, r.Metrics.DecodeTokS} {
		assert.Zero(t, d.Samples)
		assert.Nil(t, d.P50)
	}
	assert.Equal(t, 3, r.Metrics.E2E.Samples)
	assert.Equal(t, 50.0, *r.Metrics.E2E.P50)
	assert.Equal(t, 1500, *r.Metrics.PromptTokens)

	var b bytes.Buffer
	_, err := r.WriteTo(&b)
	require.NoError(t, err)
	rows := b.String()[strings.Index(b.String(), `"request_timings"`):]
	for _, k := range tokenTimeKeys {
		assert.NotContains(t, rows, `"`+k+`"`)
	}
	assert.Contains(t, rows, `"e2e_ms": 40`)
	back, err := Read(&b)
	require.NoError(t, err)
	require.False(t, back.RequestTimings[0].TokenTimed())
	require.NoError(t, back.Recompute())
	assert.Zero(t, back.Metrics.TTFT.Samples)

	// A row with some of them and not ttft_ms is malformed.
	bad := embeddingsReport()
	bad.RequestTimings[1].shape.present[rowTable.index["generation_ms"]/64] |= 1 << (rowTable.index["generation_ms"] % 64)
	require.ErrorContains(t, bad.Recompute(), "generation_ms without ttft_ms")
	require.True(t, (&TimingRow{}).TokenTimed(), "a row built in Go has every key")
}

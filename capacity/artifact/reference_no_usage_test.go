package artifact_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// referenceNoUsage is an artifact shaped as the reference tool writes it
// for a server without usage, with statistics computed by
// testdata/gen_reference_no_usage.py, independently of this package.
var referenceNoUsage = filepath.Join("..", "..", "testdata", "reference-no-usage-capacity-v3.json")

// TestReferenceNoUsageRecomputesExactly: a usage-less reference artifact
// (null output_tokens and prompt_tokens, null exact-token fields, null run
// token totals) reads, recomputes to the same values and writes back byte
// for byte (plus the final newline Write adds).
func TestReferenceNoUsageRecomputesExactly(t *testing.T) {
	want, err := os.ReadFile(referenceNoUsage)
	require.NoError(t, err)
	rep, err := artifact.Read(bytes.NewReader(want))
	require.NoError(t, err)
	require.Len(t, rep.RequestTimings, 4)
	for _, row := range rep.RequestTimings {
		require.Nil(t, row.OutputTokens)
		require.Nil(t, row.PromptTokens)
		require.Equal(t, artifact.SourceContentChunks, row.OutputTokenSource)
		require.Nil(t, row.DecodeTokS)
		require.Nil(t, row.TPOTMS)
	}
	require.NoError(t, rep.Recompute())
	require.Nil(t, rep.Metrics.OutputTokens)
	require.Nil(t, rep.Metrics.PromptTokens)
	require.Nil(t, rep.Metrics.ThroughputTokS)
	require.NotNil(t, rep.Metrics.ContentChunksPerSecond)
	var got bytes.Buffer
	_, err = rep.WriteTo(&got)
	require.NoError(t, err)
	// The reference writes no final newline; Write ends the document with one.
	require.Equal(t, string(want)+"\n", got.String())
}

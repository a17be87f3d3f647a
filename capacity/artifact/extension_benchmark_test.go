package artifact

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRunBenchmarkKey: anvil_go.run.benchmark is written only when set and
// reads back as written.
func TestRunBenchmarkKey(t *testing.T) {
	r := syntheticReport()
	require.NoError(t, r.Recompute())
	r.AnvilGo = &Extension{Version: extensionVersion, Run: &RunSummary{SentRequests: 6}}
	var buf bytes.Buffer
	require.NoError(t, write(&buf, r))
	require.NotContains(t, buf.String(), `"benchmark"`)

	name := "BenchmarkCapacityContext/ctx=4096/conc=4-2"
	r.AnvilGo.Run.Benchmark = &name
	buf.Reset()
	require.NoError(t, write(&buf, r))
	require.Contains(t, buf.String(), `"benchmark": "BenchmarkCapacityContext/ctx=4096/conc=4-2"`)
	back, err := Read(&buf)
	require.NoError(t, err)
	require.Equal(t, name, *back.AnvilGo.Run.Benchmark)
	require.Equal(t, 6, back.AnvilGo.Run.SentRequests)
}

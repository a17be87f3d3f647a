package anviltest

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/reporters"
)

// setBenchtime sets -test.benchtime for the rest of the test, as
// testing.Benchmark reads it.
func setBenchtime(t *testing.T, v string) {
	t.Helper()
	f := flag.Lookup(benchtimeFlag)
	old := f.Value.String()
	require.NoError(t, flag.Set(benchtimeFlag, v))
	t.Cleanup(func() { flag.Set(benchtimeFlag, old) })
}

// TestCapacityAgainstTheEmbeddedFake runs the real runner against the
// embedded fake server (fast profile) and checks the whole chain: the
// metrics reported, the artifacts written, ReadJSON accepting them and
// Recompute leaving them unchanged.
func TestCapacityAgainstTheEmbeddedFake(t *testing.T) {
	for _, k := range []string{EnvBaseURL, EnvOut, EnvFakeProfile, EnvFakeTimeScale, EnvFakeDecodeStep, EnvWarmup} {
		t.Setenv(k, "")
	}
	setBenchtime(t, "8x")
	out := t.TempDir()
	var rep *capacity.Report
	res := testing.Benchmark(func(b *testing.B) {
		rep = Capacity(b, capacity.Workload{ContextTokens: 2048, Concurrency: 4, MaxTokens: 256,
			RequestCanaries: true, ResponseWords: 4, ControlledOutputPolicy: capacity.PolicyStrict},
			WithFakeProfile("fast"), WithOutDir(out))
	})
	require.NotNil(t, rep, "the benchmark failed")
	require.Equal(t, 8, res.N, "-benchtime 8x is 8 measured requests")
	require.Equal(t, 8, rep.Requests)
	require.Zero(t, rep.Failed, "%+v", rep.Failures)
	require.True(t, rep.PerformanceEligible)
	require.Equal(t, capacity.ProtocolV4Reasoning, rep.MeasurementProtocol)
	require.Equal(t, 8, rep.Metrics.RequestCanaryPassed)
	require.Equal(t, "anvil-fakeserver-fast", *rep.Engine)

	for _, unit := range []string{reporters.UnitTTFTP50, reporters.UnitTTFTP95, reporters.UnitTTFOP50,
		reporters.UnitTPOT, reporters.UnitDecode, reporters.UnitPrefill, reporters.UnitE2EP50,
		reporters.UnitOutputThroughput, reporters.UnitFailed} {
		require.Contains(t, res.Extra, unit)
	}
	require.InDelta(t, rep.WallClockMS*1e6/8, res.Extra[reporters.UnitNsPerOp], 1e-6)

	jsons, _ := filepath.Glob(filepath.Join(out, "*.json"))
	require.Len(t, jsons, 1)
	data, err := os.ReadFile(jsons[0])
	require.NoError(t, err)
	read, err := reporters.ReadJSON(bytes.NewReader(data))
	require.NoError(t, err)
	before, err := read.MarshalJSON()
	require.NoError(t, err)
	require.NoError(t, read.Recompute())
	after, err := read.MarshalJSON()
	require.NoError(t, err)
	if diff := cmp.Diff(string(before), string(after)); diff != "" {
		t.Errorf("Recompute changed the artifact (-written +recomputed):\n%s", diff)
	}
	benches, _ := filepath.Glob(filepath.Join(out, "*.bench"))
	require.Len(t, benches, 1)
}

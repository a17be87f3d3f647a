package anviltest

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// TestInterruptCountsSentRequests: Ctrl-C after 23 of 400 planned
// requests (15 succeeded, 8 failed, 377 never sent). The .bench file has
// 23 iterations, ns/op over those 23, failed-req 8 and unsent-req 377; the
// log line says the same; the v1 artifact keeps requests 400 and failed
// 385 (the never-sent requests are its cancelled failures).
func TestInterruptCountsSentRequests(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child benchmarks")
	}
	if !canInterruptSelf {
		t.Skip("the child cannot send itself Ctrl-C here")
	}
	out := t.TempDir()
	stdout, err := child(t, "interrupt-unsent", t.TempDir(), out, "-test.benchtime=400x")
	require.Error(t, err, "the benchmark fails:\n%s", stdout)
	require.Contains(t, stdout, "step-model: 400 requests planned, 23 sent, 15 succeeded, 8 failed, 377 never sent, wall 1200 ms")
	require.Contains(t, stdout, "interrupted: 23 of 400 planned requests sent, 15 succeeded, 377 never sent")
	require.Contains(t, stdout, "failures by class: http_error 8; first: request 0:", "the never-sent requests are no cancelled failures")
	require.Empty(t, benchLines(t, stdout), "no benchmark line for an interrupted run")

	r := oneArtifact(t, out, stdout)
	require.Equal(t, 400, r.Requests, "v1 semantics: requests are the planned ones")
	require.Equal(t, 385, r.Failed)
	require.Equal(t, 23, r.AnvilGo.Run.SentRequests)
	require.Equal(t, 377, r.AnvilGo.Run.NeverSentRequests)

	benches, _ := filepath.Glob(filepath.Join(out, "*.bench"))
	require.Len(t, benches, 1)
	data, err := os.ReadFile(benches[0])
	require.NoError(t, err)
	rs := benchLines(t, string(data))
	require.Len(t, rs, 1)
	require.Equal(t, 23, rs[0].Iters)
	got := valueMap(rs[0])
	want := map[string]float64{
		"ns/op": 52173913, "failed-req": 8, "unsent-req": 377, // 1200e6 / 23 as go test prints it
	}
	if diff := cmp.Diff(want, pickValues(got, "ns/op", "failed-req", "unsent-req")); diff != "" {
		t.Errorf(".bench (-want +got):\n%s", diff)
	}
	require.NotContains(t, got, "output-tok/s")
	require.Equal(t, "false", string(rs[0].GetConfig("eligible")))
}

// TestStoppedRunLineCountsSentRequests: a run that stopped by itself
// after 6 of 10 requests, all 6 successful, prints a benchmark line of
// the 10 iterations -benchtime asked for (b.Loop's count) with ns/op =
// wall / 6 and unsent-req 4.
func TestStoppedRunLineCountsSentRequests(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child benchmarks")
	}
	stdout, err := child(t, "stopped-unsent", t.TempDir(), t.TempDir(), "-test.benchtime=10x")
	require.NoError(t, err, stdout)
	require.Regexp(t, regexp.MustCompile(`(?m)^BenchmarkSeam\S*\s+10\s+5\d{7} ns/op\s`), stdout)
	rs := benchLines(t, stdout)
	require.Len(t, rs, 1, stdout)
	require.Equal(t, 10, rs[0].Iters)
	got := valueMap(rs[0])
	require.InDelta(t, 300e6/6, got["ns/op"], 1e3)
	require.Equal(t, 0.0, got["failed-req"])
	require.Equal(t, 4.0, got["unsent-req"])
	require.Contains(t, stdout, "step-model: 10 requests planned, 6 sent, 6 succeeded, 0 failed, 4 never sent")
}

func pickValues(m map[string]float64, units ...string) map[string]float64 {
	out := map[string]float64{}
	for _, u := range units {
		if v, ok := m[u]; ok {
			out[u] = v
		}
	}
	return out
}

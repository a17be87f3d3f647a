package reporters

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// TestIdentityOfTracesAndSessions: two replays compare only when they
// replayed one trace (its SHA-256) with the same options; a replay never
// compares with a synthetic run, nor sessions of another spec.
func TestIdentityOfTracesAndSessions(t *testing.T) {
	replay := func() map[string]any {
		return map[string]any{"kind": "trace", "trace": map[string]any{
			"file": "conv.jsonl", "format": "mooncake", "sha256": "7f0f42025c3a7065a7672d854fa88ce778d061ea0a7df327221f05aeda8439dd",
			"bytes": n("123687"), "rows": n("500"), "first_line": n("1"), "last_line": n("500"),
			"speed_up": n("50.0"), "window_start_ms": n("0.0"), "window_end_ms": nil, "first": n("0")},
			"send_lag_ms": map[string]any{"requests": n("500"), "p50": n("1.0"), "p99": n("2.0"), "max": n("3.0")}}
	}
	sessions := map[string]any{"kind": "sessions", "sessions": map[string]any{
		"spec": "turns=3,user=200,output=128,think=2s,think_dist=fixed,seed=0", "sessions": n("4"), "users": n("2")}}
	const w = "anvil_go.workload."
	checkIdentity(t, []identityCase{
		{name: "one trace, one replay", both: []edit{{"anvil_go.workload", replay(), false}},
			news: []edit{{w + "send_lag_ms.p99", n("9.0"), false}, {w + "trace.file", "renamed.jsonl", false}, {w + "trace.bytes", n("1"), false}}},
		{name: "replay vs synthetic", news: []edit{{"anvil_go.workload", replay(), false}},
			want: []string{w + "kind", w + "trace.sha256", w + "trace.format", w + "trace.rows", w + "trace.speed_up",
				w + "trace.window_start_ms", w + "trace.window_end_ms", w + "trace.first"}, problem: "differs"},
		{name: "another trace", both: []edit{{"anvil_go.workload", replay(), false}},
			news: []edit{{w + "trace.sha256", "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff", false}},
			want: []string{w + "trace.sha256"}, problem: "differs"},
		{name: "another speed-up", both: []edit{{"anvil_go.workload", replay(), false}},
			news: []edit{{w + "trace.speed_up", n("10.0"), false}}, want: []string{w + "trace.speed_up"}},
		{name: "another window", both: []edit{{"anvil_go.workload", replay(), false}},
			news: []edit{{w + "trace.window_start_ms", n("1000.0"), false}, {w + "trace.window_end_ms", n("61000.0"), false}, {w + "trace.rows", n("40"), false}},
			want: []string{w + "trace.rows", w + "trace.window_start_ms", w + "trace.window_end_ms"}},
		{name: "first rows", both: []edit{{"anvil_go.workload", replay(), false}},
			news: []edit{{w + "trace.first", n("100"), false}, {w + "trace.rows", n("100"), false}},
			want: []string{w + "trace.rows", w + "trace.first"}},
		{name: "one session spec", both: []edit{{"anvil_go.workload", sessions, false}}},
		{name: "another session spec", both: []edit{{"anvil_go.workload", cloneDoc(sessions), false}},
			news: []edit{{w + "sessions.spec", "turns=2,user=200,output=128,think=2s,think_dist=fixed,seed=0", false}, {w + "sessions.users", n("8"), false}},
			want: []string{w + "sessions.spec", w + "sessions.users"}},
		{name: "malformed trace hash", both: []edit{{"anvil_go.workload", replay(), false}},
			news: []edit{{w + "trace.sha256", "", false}}, want: []string{w + "trace.sha256"}, problem: "malformed in new: want a non-empty string"},
	})
}

// TestCompareProvenanceFakePort: runs against the embedded fake, each on
// the new port it listened on, show no base URL difference; runs against
// two real endpoints do.
func TestCompareProvenanceFakePort(t *testing.T) {
	run := func(engine, url string) *artifact.Report {
		r := syntheticRun(t, 30, 4, 1)
		r.Engine, r.BaseURL = new(engine), url
		return r
	}
	c, err := Compare([]*artifact.Report{run("anvil-fakeserver-reasoning", "http://127.0.0.1:34679/v1")},
		[]*artifact.Report{run("anvil-fakeserver-reasoning", "http://127.0.0.1:41235/v1")})
	require.NoError(t, err)
	for _, d := range c.Provenance {
		require.NotEqual(t, "base_url", d.Key, "the fake's ports tell nothing: %+v", d)
	}
	c, err = Compare([]*artifact.Report{run("vllm-0.11.0", "http://gpu-a:8000/v1")},
		[]*artifact.Report{run("vllm-0.11.0", "http://gpu-b:8000/v1")})
	require.NoError(t, err)
	var keys []string
	for _, d := range c.Provenance {
		keys = append(keys, d.Key)
	}
	require.Contains(t, keys, "base_url")
}

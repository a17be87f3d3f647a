package anviltest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchproc"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/reporters"
)

// mixedIgnore is the -ignore list README "Comparing runs" gives for
// putting converted artifacts and go test output in one table: the keys
// only one of them carries.
const mixedIgnore = "goos,goarch,pkg,cpu,target,fake-profile,fake-time-scale,protocol,workload,eligible"

func TestIdentityConfig(t *testing.T) {
	env := func(kv map[string]string) Option {
		return WithEnvironment(func(k string) string { return kv[k] })
	}
	for _, tc := range []struct {
		name string
		opts []Option
		want [][2]string
	}{
		{"embedded fake", []Option{env(nil)}, [][2]string{
			{"model", "fake-reasoning"}, {"engine", "anvil-fakeserver-reasoning"}, {"gpu", "none"},
			{"target", "embedded-fake"}, {"fake-profile", "reasoning"}, {"fake-time-scale", "0.05"},
		}},
		{"fake knobs", []Option{env(map[string]string{envFakeProfile: "plain", envFakeTimeScale: "0.5", envFakeDecodeStep: "30ms"})}, [][2]string{
			{"model", "fake-plain"}, {"engine", "anvil-fakeserver-plain"}, {"gpu", "none"},
			{"target", "embedded-fake"}, {"fake-profile", "plain"}, {"fake-time-scale", "0.5"}, {"fake-decode-step", "30ms"},
		}},
		{"option wins", []Option{env(map[string]string{envFakeProfile: "plain"}), withFakeProfile("fast")}, [][2]string{
			{"model", "fake-fast"}, {"engine", "anvil-fakeserver-fast"}, {"gpu", "none"},
			{"target", "embedded-fake"}, {"fake-profile", "fast"}, {"fake-time-scale", "0.05"},
		}},
		{"real endpoint", []Option{env(map[string]string{
			envBaseURL: "http://user:secret@gpu-box:8000/v1?key=x#f", envModel: "qwen3-32b", envEngine: "vllm-0.11.0", envGPU: "h100-80gb",
		})}, [][2]string{
			{"model", "qwen3-32b"}, {"engine", "vllm-0.11.0"}, {"gpu", "h100-80gb"}, {"target", "http://gpu-box:8000/v1"},
		}},
		{"model probed per run", []Option{env(map[string]string{envBaseURL: "http://gpu-box:8000/v1"}),
			WithTarget(capacity.Target{Engine: "sglang\x1b[2J"})}, [][2]string{
			{"engine", `sglang\x1b[2J`}, {"target", "http://gpu-box:8000/v1"},
		}},
		{"bad variable: left to the benchmark", []Option{env(map[string]string{envFakeTimeScale: "-1"})}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			writeIdentity(&buf, newSettings(tc.opts))
			var want strings.Builder
			for _, kv := range tc.want {
				want.WriteString(kv[0] + ": " + kv[1] + "\n")
			}
			if tc.want != nil {
				// The build of the binary, as its artifacts record it: a
				// go test binary of this module is "(devel)", unstamped.
				want.WriteString("anvil-version: (devel)\n")
			}
			require.Equal(t, want.String(), buf.String())
		})
	}
}

// TestGoTestOutputCarriesIdentity runs a benchmark against the embedded
// fake server as go test -bench does, with Main as TestMain. Read by
// benchstat's parser, its output carries the identity as configuration;
// the artifact it wrote, converted as `anvilreport bench` converts it,
// has the same benchmark name and the same model, engine and gpu, so the
// two share one benchstat row (with -ignore for the keys only one of them
// has).
func TestGoTestOutputCarriesIdentity(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child benchmarks")
	}
	out := t.TempDir()
	stdout, err := childEnv(t, "engine", t.TempDir(), out,
		[]string{envBaseURL + "=", envFakeProfile + "=fast"}, "-test.benchtime=2x")
	require.NoError(t, err, stdout)
	lines := benchLines(t, stdout)
	require.Len(t, lines, 1, stdout)
	got := lines[0]
	cfg := func(r *benchfmt.Result, keys ...string) map[string]string {
		m := map[string]string{}
		for _, k := range keys {
			m[k] = string(r.GetConfig(k))
		}
		return m
	}
	require.Equal(t, map[string]string{
		"model": "fake-fast", "engine": "anvil-fakeserver-fast", "gpu": "none",
		"target": "embedded-fake", "fake-profile": "fast", "fake-time-scale": "0.05",
	}, cfg(got, "model", "engine", "gpu", "target", "fake-profile", "fake-time-scale"))

	rep := oneArtifact(t, out)
	var conv bytes.Buffer
	require.NoError(t, reporters.NewBenchWriter(&conv).Write(rep, ""))
	converted := benchLines(t, conv.String())
	require.Len(t, converted, 1)
	require.Equal(t, got.Name.String(), converted[0].Name.String(), "named as go test names it")
	require.Regexp(t, `^Seam-\d+$`, converted[0].Name.String())
	require.Equal(t, cfg(got, "model", "engine", "gpu", "anvil-version", "anvil-revision"), cfg(converted[0], "model", "engine", "gpu", "anvil-version", "anvil-revision"))
	require.Equal(t, "(devel)", string(got.GetConfig("anvil-version")), "the build, on both sides")

	// benchstat's grouping: -table .config -row .fullname, ignoring the keys
	// only one side carries.
	filter, err := benchproc.NewFilter("*")
	require.NoError(t, err)
	var parser benchproc.ProjectionParser
	tableBy, err := parser.Parse(".config", filter)
	require.NoError(t, err)
	rowBy, err := parser.Parse(".fullname", filter)
	require.NoError(t, err)
	_, err = parser.Parse(mixedIgnore, filter)
	require.NoError(t, err)
	require.Equal(t, rowBy.Project(got), rowBy.Project(converted[0]), "one row")
	require.Equal(t, tableBy.Project(got), tableBy.Project(converted[0]), "one table")
}

package anviltest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
)

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"A", "", 1}, {"", "AB", 2}, {"ANVIL_MODEL", "ANVIL_MODEL", 0},
		{"ANVIL_MODLE", "ANVIL_MODEL", 1}, // a swap is one edit
		{"ANVIL_BASE_ULR", "ANVIL_BASE_URL", 1},
		{"ANVIL_ENIGNE", "ANVIL_ENGINE", 1},
		{"ANVIL_WARMPU", "ANVIL_WARMUP", 1},
		{"ANVIL_GPUS", "ANVIL_GPU", 1},
		{"KITTEN", "SITTING", 3},
		{"CA", "ABC", 3}, // optimal string alignment, not Damerau's 2
	} {
		require.Equal(t, tc.want, editDistance(tc.a, tc.b), "%q %q", tc.a, tc.b)
		require.Equal(t, tc.want, editDistance(tc.b, tc.a), "%q %q", tc.b, tc.a)
	}
}

// TestUnknownVariables: each typo of the first hour is named with the
// variable meant, in any case; a name far from every variable gets no
// guess; the variables anviltest reads, the key's own variable and other
// prefixes pass; no value is shown.
func TestUnknownVariables(t *testing.T) {
	for typo, meant := range map[string]string{
		"ANVIL_BASE_ULR": envBaseURL, "ANVIL_MODLE": envModel, "ANVIL_WARMPU": envWarmup,
		"ANVIL_ENIGNE": envEngine, "anvil_base_url": envBaseURL,
		"ANVIL_TIMEOUTS": envTimeout, "ANVIL_SLO_TTFB": envSLOTTFT,
	} {
		err := unknownVariables([]string{typo + "=sk-secret", "HOME=/root"}, nil)
		require.EqualError(t, err, "anviltest: "+typo+": is no variable anviltest reads; did you mean "+meant+
			"? (every variable: go doc github.com/anvilbench/anvil/anviltest)", typo)
		var fe *capacity.FieldError
		require.ErrorAs(t, err, &fe)
		require.Equal(t, typo, fe.Field)
	}
	err := unknownVariables([]string{"ANVIL_WHATEVER_YOU_LIKE=1"}, nil)
	require.EqualError(t, err, "anviltest: ANVIL_WHATEVER_YOU_LIKE: is no variable anviltest reads (every variable: go doc github.com/anvilbench/anvil/anviltest)")

	err = unknownVariables([]string{"ANVIL_BASE_ULR=x", "ANVIL_MODLE=y"}, nil)
	require.ErrorContains(t, err, "ANVIL_BASE_ULR: ")
	require.ErrorContains(t, err, "\nanviltest: ANVIL_MODLE: ", "every unknown variable, one a line")

	var environ []string
	for _, n := range envNames() {
		environ = append(environ, n+"=1")
	}
	environ = append(environ, "ANVIL_MY_KEY=sk-1", "ANVILTEST_CHILD=1", "MY_ANVIL_THING=1", "PATH=/bin")
	require.NoError(t, unknownVariables(environ, []string{"ANVIL_MY_KEY", ""}))
	require.ErrorContains(t, unknownVariables(environ, nil), "ANVIL_MY_KEY: is no variable")
}

// TestUnknownVariableFailsTheRun: a typo in the process environment fails
// Capacity, Main's identity and Conformance's target before anything is
// started; the variable that Target.APIKeyEnv or ANVIL_API_KEY_ENV names
// is the user's own and passes.
func TestUnknownVariableFailsTheRun(t *testing.T) {
	clearEnv(t)
	t.Setenv("ANVIL_BASE_ULR", "http://127.0.0.1:1/v1")
	_, err := newSettings(nil).resolveTarget()
	require.ErrorContains(t, err, "ANVIL_BASE_ULR: is no variable anviltest reads; did you mean ANVIL_BASE_URL?")
	_, err = newSettings(nil).applyWorkloadEnv(capacity.Workload{})
	require.ErrorContains(t, err, "did you mean ANVIL_BASE_URL?")
	var out strings.Builder
	writeIdentity(&out, newSettings(nil))
	require.Empty(t, out.String(), "Main prints no identity of a run that will fail")
	_, err = newSettings([]Option{WithEnvironment(os.Getenv)}).resolveTarget()
	require.NoError(t, err, "WithEnvironment reads by name only: nothing to search")

	clearEnv(t)
	t.Setenv("ANVIL_MY_KEY", "sk-1")
	t.Setenv(envAPIKeyEnv, "ANVIL_MY_KEY")
	_, err = newSettings(nil).env()
	require.NoError(t, err)
	t.Setenv(envAPIKeyEnv, "")
	_, err = newSettings([]Option{WithTarget(capacity.Target{APIKeyEnv: "ANVIL_MY_KEY"})}).env()
	require.NoError(t, err)
	_, err = newSettings(nil).env()
	require.ErrorContains(t, err, "ANVIL_MY_KEY: is no variable")
}

// TestFakeLabelled: a real setup's labels from the environment without a
// base URL are refused, naming them; with a base URL, or set in code, they
// pass.
func TestFakeLabelled(t *testing.T) {
	_, err := newSettings([]Option{WithEnvironment(env{envEngine: "vllm-0.11.0", envGPU: "h100-80gb"}.get)}).resolveTarget()
	require.EqualError(t, err, `anviltest: ANVIL_ENGINE="vllm-0.11.0" and ANVIL_GPU="h100-80gb" set without ANVIL_BASE_URL: the run would measure the embedded fake server and record its numbers under that label; set ANVIL_BASE_URL to the endpoint, or unset them to run against the fake`)
	_, err = newSettings([]Option{WithEnvironment(env{envModel: "qwen3-32b"}.get)}).resolveTarget()
	require.ErrorContains(t, err, `ANVIL_MODEL="qwen3-32b" set without ANVIL_BASE_URL`)
	require.ErrorContains(t, err, "or unset it to run")
	_, err = newSettings([]Option{WithEnvironment(env{envEngine: "vllm", envBaseURL: "http://h/v1"}.get)}).resolveTarget()
	require.NoError(t, err)
	_, err = newSettings([]Option{WithEnvironment(env{envEngine: "vllm"}.get), WithTarget(capacity.Target{Engine: "mine"})}).resolveTarget()
	require.NoError(t, err, "the code's own label")
}

// TestExtraBodyDuplicateKey: ANVIL_EXTRA_BODY with a key twice in one
// object, at any depth, is refused naming the key.
func TestExtraBodyDuplicateKey(t *testing.T) {
	for body, key := range map[string]string{
		`{"a":1,"a":2}`:                     "a",
		`{"x":{"b":[1,{"c":1,"c":1}]}}`:     "c",
		`{"o":{"k":1},"p":[{"k":1}],"o":2}`: "o",
	} {
		_, err := readEnvironment(env{envExtraBody: body}.get)
		require.EqualError(t, err, `anviltest: ANVIL_EXTRA_BODY = `+strconv.Quote(body)+`: want a JSON object such as {"cache_prompt":false}: key "`+key+`" twice in one object: say which value to send`, body)
	}
	for _, body := range []string{`{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}`, `{"k":"k","v":["k","k"]}`, `{}`} {
		_, err := readEnvironment(env{envExtraBody: body}.get)
		require.NoError(t, err, body)
	}
}

// TestTypoChild: the first hour's typos in a real go test -bench run (this
// test binary run again, its environment the user's) fail the benchmark
// before anything starts, naming the variable meant; nothing is written
// and no identity is printed.
func TestTypoChild(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child benchmark")
	}
	for _, tc := range []struct{ set, meant string }{
		{"ANVIL_BASE_ULR=http://127.0.0.1:9/v1", envBaseURL},
		{"ANVIL_MODLE=qwen3-32b", envModel},
		{"ANVIL_WARMPU=3", envWarmup},
		{"ANVIL_ENIGNE=vllm-0.11.0", envEngine},
	} {
		out := filepath.Join(t.TempDir(), "out")
		cmd := childCommand(t, []string{tc.set, envOut + "=" + out, envEngine + "=", envProgress + "=0"},
			"-test.run=^$", "-test.bench=^BenchmarkCapacityContext$/^ctx=4096/", "-test.benchtime=2x")
		got, err := cmd.CombinedOutput()
		require.Error(t, err, "%s", got)
		name, _, _ := strings.Cut(tc.set, "=")
		require.Contains(t, string(got), "anviltest: "+name+": is no variable anviltest reads; did you mean "+tc.meant+"?", "%s", got)
		require.NotContains(t, string(got), "embedded fake server", "nothing started:\n%s", got)
		require.NotContains(t, string(got), "target: ", "no identity printed:\n%s", got)
		_, err = os.Stat(out)
		require.ErrorIs(t, err, os.ErrNotExist, "nothing written")
	}
	// A label set without a base URL fails too, the fake never started.
	cmd := childCommand(t, []string{envEngine + "=vllm-0.11.0", envGPU + "=h100-80gb", envProgress + "=0"},
		"-test.run=^$", "-test.bench=^BenchmarkCapacityContext$/^ctx=4096/", "-test.benchtime=2x")
	got, err := cmd.CombinedOutput()
	require.Error(t, err, "%s", got)
	require.Contains(t, string(got), `ANVIL_ENGINE="vllm-0.11.0" and ANVIL_GPU="h100-80gb" set without ANVIL_BASE_URL`, "%s", got)
	require.NotContains(t, string(got), "engine: vllm", "%s", got)
}

// TestWithEnvNames: a field a variable sets is followed by the variable,
// once, whatever already follows it; a longer field, a field inside a
// word, and the shard fields (explainFields says which variable set
// them) are left alone.
func TestWithEnvNames(t *testing.T) {
	for in, want := range map[string]string{
		"is Target.BaseURL its API root?":                                            "is Target.BaseURL (ANVIL_BASE_URL) its API root?",
		"Target.Model and Target.MaxModelLen, and":                                   "Target.Model (ANVIL_MODEL) and Target.MaxModelLen (ANVIL_MAX_MODEL_LEN), and",
		"Target.MaxModelLen (ANVIL_MAX_MODEL_LEN) is":                                "Target.MaxModelLen (ANVIL_MAX_MODEL_LEN) is",
		"within Workload.Timeout = 5s.":                                              "within Workload.Timeout (ANVIL_TIMEOUT) = 5s.",
		"Workload.WarmupFor = 0s":                                                    "Workload.WarmupFor = 0s",
		"Workload.Shard.StartAt passed":                                              "Workload.Shard.StartAt (ANVIL_START_AT) passed",
		"Workload.Shard.Count = 3 (Workload.Shard.Count comes from ANVIL_SHARD=0/3)": "Workload.Shard.Count = 3 (Workload.Shard.Count comes from ANVIL_SHARD=0/3)",
		"Target.Model comes from ANVIL_MODEL":                                        "Target.Model comes from ANVIL_MODEL",
		"myTarget.Model":                                                             "myTarget.Model",
		"no field here":                                                              "no field here",
		"Target.ModelX":                                                              "Target.ModelX",
	} {
		require.Equal(t, want, withEnvNames(in), in)
	}
}

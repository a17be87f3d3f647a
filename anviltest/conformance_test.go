package anviltest

import (
	"bytes"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/anviltest/conformance"
	"github.com/anvilbench/anvil/capacity"
	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// TestConformance runs the conformance suite against ANVIL_BASE_URL (the
// embedded fake server when it is unset):
//
//	ANVIL_BASE_URL=http://localhost:8000/v1 go test -run Conformance -v ./anviltest
//
// Against the embedded fake every check passes. The environment is read
// only when -run names the suite (as above): a plain go test ./... runs it
// against the embedded fake as one of this package's tests, the same
// whatever ANVIL_* variables the shell holds.
func TestConformance(t *testing.T) {
	if !runSelects("Conformance") {
		Conformance(t, WithEnvironment(nil), withOutDir(t.TempDir()))
		return
	}
	Conformance(t)
}

// recorder is a verdictReporter that records the calls.
type recorder struct{ calls []string }

func (r *recorder) Helper()           {}
func (r *recorder) Log(args ...any)   { r.calls = append(r.calls, "log "+args[0].(string)) }
func (r *recorder) Error(args ...any) { r.calls = append(r.calls, "error "+args[0].(string)) }
func (r *recorder) Skip(args ...any)  { r.calls = append(r.calls, "skip "+args[0].(string)) }

func TestReportVerdict(t *testing.T) {
	for _, tc := range []struct {
		v    conformance.Verdict
		want []string
	}{
		{conformance.Verdict{Outcome: conformance.Pass, Reason: "fine", Notes: []string{"saw a"}}, []string{"log saw a", "log PASS: fine"}},
		{conformance.Verdict{Outcome: conformance.Fail, Reason: "Target.BaseURL x is wrong", Notes: []string{"Target.MaxModelLen 5"}},
			[]string{"log Target.MaxModelLen (ANVIL_MAX_MODEL_LEN) 5", "error FAIL: Target.BaseURL (ANVIL_BASE_URL) x is wrong"}},
		{conformance.Verdict{Outcome: conformance.Fail, Reason: "broken", Notes: []string{"saw b", "saw c"}}, []string{"log saw b", "log saw c", "error FAIL: broken"}},
		{conformance.Verdict{Outcome: conformance.Skip, Reason: "absent"}, []string{"skip SKIP: absent"}},
	} {
		var r recorder
		reportVerdict(&r, tc.v)
		require.Equal(t, tc.want, r.calls)
	}
}

// TestWithRequired: the names reach the suite's configuration, where an
// unknown one is refused.
func TestWithRequired(t *testing.T) {
	s := newSettings([]Option{WithEnvironment(env{}.get), WithRequired("usage"), WithRequired("usgae")})
	cfg, err := s.conformanceConfig(capacity.Target{BaseURL: "http://127.0.0.1:1/v1"})
	require.NoError(t, err)
	require.Equal(t, []string{"usage", "usgae"}, cfg.Required)
	_, err = conformance.New(t.Context(), cfg)
	require.EqualError(t, err, `conformance: Config.Required("usgae"): want one of `+strings.Join(conformance.Checks(), ", "))
}

// TestConformanceCommand runs the command a user types, go test -run
// Conformance -v, in a child process against a loopback fake server that
// ignores max_tokens: the output has one verdict line per check, the
// max_tokens subtest fails and only it, and the verdict files are written
// to ANVIL_OUT.
func TestConformanceCommand(t *testing.T) {
	if os.Getenv(envBaseURL) != "" {
		t.Skip("runs its own server")
	}
	cfg := fakeserver.Fast()
	cfg.TimeScale = defaultFakeTimeScale
	cfg.Faults.Probability = map[fakeserver.Fault]float64{"ignore_max_tokens": 1}
	srv := fakeserver.New(cfg)
	defer srv.Close()
	out := t.TempDir()
	env := []string{envBaseURL + "=" + srv.BaseURL(), envOut + "=" + out}
	b, err := childCommand(t, env, "-test.run=^TestConformance$", "-test.v").CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "the run must fail:\n%s", b)
	lines := regexp.MustCompile(`(?m)^    --- (PASS|FAIL|SKIP): TestConformance/(\w+)`).FindAllStringSubmatch(string(b), -1)
	got := map[string]string{}
	for _, l := range lines {
		got[l[2]] = l[1]
	}
	want := map[string]string{}
	for _, n := range conformance.Checks() {
		want[n] = "PASS"
	}
	want["max_tokens"] = "FAIL"
	want["isolation"] = "SKIP" // capacity refuses completion tokens beyond max_tokens
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("subtest verdicts (-want +got):\n%s\n%s", diff, b)
	}
	require.Contains(t, string(b), "FAIL: the answer is not cut at the limit: max_tokens 5: 10 tokens by usage.completion_tokens")
	md, err := filepath.Glob(filepath.Join(out, "conformance.*.md"))
	require.NoError(t, err)
	require.Len(t, md, 1, "%s", b)
	table, err := os.ReadFile(md[0])
	require.NoError(t, err)
	require.True(t, bytes.Contains(table, []byte("| max_tokens | FAIL |")), "%s", table)
}

// TestConformanceBaseURLWithoutV1 runs the command a user types with the
// commonest slip, ANVIL_BASE_URL without its /v1, against a plain server
// that serves its API only under /v1: one FAIL, the models check's,
// naming the URL given, the URL meant and the variable to change; every
// other check skips saying why; the verdict files are still written.
func TestConformanceBaseURLWithoutV1(t *testing.T) {
	if os.Getenv(envBaseURL) != "" {
		t.Skip("runs its own server")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			fmt.Fprint(w, `{"object":"list","data":[{"id":"m","max_model_len":4096}]}`)
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	out := t.TempDir()
	b, err := childCommand(t, []string{envBaseURL + "=" + srv.URL, envOut + "=" + out}, "-test.run=^TestConformance$", "-test.v").CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "the run must fail:\n%s", b)
	lines := regexp.MustCompile(`(?m)^    --- (PASS|FAIL|SKIP): TestConformance/(\w+)`).FindAllStringSubmatch(string(b), -1)
	got := map[string]string{}
	for _, l := range lines {
		got[l[2]] = l[1]
	}
	want := map[string]string{}
	for _, n := range conformance.Checks() {
		want[n] = "SKIP"
	}
	want["models"] = "FAIL"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("subtest verdicts (-want +got):\n%s\n%s", diff, b)
	}
	why := "Target.BaseURL (ANVIL_BASE_URL) " + srv.URL + " is not the API root, GET /models there is 404; did you mean " + srv.URL + "/v1?"
	require.Contains(t, string(b), "FAIL: "+why+"\n", "%s", b)
	require.Contains(t, string(b), "SKIP: not run: "+why+" (see the models check)\n", "%s", b)
	require.Equal(t, 1, strings.Count(string(b), ": FAIL: "), "one failure, the models check's:\n%s", b)
	md, err := filepath.Glob(filepath.Join(out, "conformance.*.md"))
	require.NoError(t, err)
	require.Len(t, md, 1, "%s", b)
}

// TestConformanceLogScrubbed runs the command a user types against a
// server that names its model after the caller's API key and echoes the
// key in every error: the test log (go test -v), like the verdict files,
// carries no part of the key, though the suite sent it as the model id.
func TestConformanceLogScrubbed(t *testing.T) {
	if os.Getenv(envBaseURL) != "" {
		t.Skip("runs its own server")
	}
	const key = "PLANTEDKEY-0123456789abcdef0123456789"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		echo := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/models" {
			fmt.Fprintf(w, `{"object":"list","data":[{"id":"model-%s","max_model_len":4096}]}`, echo)
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, `{"error":{"message":"no model model-%s for key %s"}}`, echo, echo)
	}))
	defer srv.Close()
	out := t.TempDir()
	env := []string{envBaseURL + "=" + srv.URL + "/v1", envAPIKeyEnv + "=PLANTED_KEY_VAR", "PLANTED_KEY_VAR=" + key, envOut + "=" + out}
	b, _ := childCommand(t, env, "-test.run=^TestConformance$", "-test.v").CombinedOutput()
	require.Contains(t, string(b), "--- FAIL: TestConformance/stream_framing", "the suite ran:\n%s", b)
	files, err := filepath.Glob(filepath.Join(out, "conformance.*"))
	require.NoError(t, err)
	require.Len(t, files, 2, "%s", b)
	for _, text := range append([]string{string(b)}, files...) {
		if text != string(b) {
			f, err := os.ReadFile(text)
			require.NoError(t, err)
			text = string(f)
		}
		for i := 0; i+8 <= len(key); i++ {
			require.NotContains(t, text, key[i:i+8])
		}
		require.Regexp(t, `model-\\?\[redacted\\?\]`, text, "the model id is in every output, scrubbed (Markdown escapes the brackets)")
	}
}

// runSelects reports whether the test binary's -run pattern names word.
func runSelects(word string) bool {
	f := flag.Lookup("test.run")
	return f != nil && strings.Contains(f.Value.String(), word)
}

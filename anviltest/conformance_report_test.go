package anviltest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	fakeserver "github.com/anvilbench/anvil/fake_server"
)

var updateConformance = flag.Bool("update", false, "rewrite the golden files under testdata/")

// recorder is a verdictReporter that records the calls.
type recorder struct{ calls []string }

func (r *recorder) Helper()           {}
func (r *recorder) Log(args ...any)   { r.calls = append(r.calls, "log "+args[0].(string)) }
func (r *recorder) Error(args ...any) { r.calls = append(r.calls, "error "+args[0].(string)) }
func (r *recorder) Skip(args ...any)  { r.calls = append(r.calls, "skip "+args[0].(string)) }

func TestReportVerdict(t *testing.T) {
	for _, tc := range []struct {
		v    Verdict
		want []string
	}{
		{Verdict{Outcome: Pass, Reason: "fine", Notes: []string{"saw a"}}, []string{"log saw a", "log PASS: fine"}},
		{Verdict{Outcome: Fail, Reason: "broken", Notes: []string{"saw b", "saw c"}}, []string{"log saw b", "log saw c", "error FAIL: broken"}},
		{Verdict{Outcome: Skip, Reason: "absent"}, []string{"skip SKIP: absent"}},
	} {
		var r recorder
		reportVerdict(&r, tc.v)
		require.Equal(t, tc.want, r.calls)
	}
}

func TestWithRequired(t *testing.T) {
	s := newSettings([]Option{WithRequired(CheckUsage, "usgae")})
	err := s.conformance.validate()
	var uc *UnknownCheckError
	require.ErrorAs(t, err, &uc)
	require.Equal(t, UnknownCheckError{Option: "WithRequired", Name: "usgae"}, *uc)

	s = newSettings([]Option{WithRequired(CheckPrefixCache)})
	require.NoError(t, s.conformance.validate())
	got := s.conformance.apply(Verdict{Check: CheckPrefixCache, Outcome: Skip, Reason: "never reported"})
	require.Equal(t, Verdict{Check: CheckPrefixCache, Outcome: Fail, Reason: "required, but skipped: never reported"}, got)
	other := Verdict{Check: CheckDeterminism, Outcome: Skip, Reason: "differs"}
	require.Equal(t, other, s.conformance.apply(other))
}

func sampleReport() *ConformanceReport {
	return &ConformanceReport{
		BaseURL:   "http://127.0.0.1:8000/v1",
		Model:     "some|model",
		StartedAt: time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC),
		Verdicts: []Verdict{
			{Check: CheckModels, Outcome: Skip, Reason: "no context length"},
			{Check: CheckUsage, Outcome: Fail, Reason: "total_tokens 5 != 2 + 4", Notes: []string{"usage {...}"}},
			{Check: CheckBadRequest, Outcome: Pass, Reason: `a <b> [link](x) | pipe \ back`},
		},
	}
}

// TestConformanceReportGolden pins the two verdict files' bytes.
func TestConformanceReportGolden(t *testing.T) {
	dir := t.TempDir()
	r := sampleReport()
	p, err := r.writeFiles(dir)
	require.NoError(t, err)
	p2, err := r.writeFiles(dir)
	require.NoError(t, err)
	require.NotEqual(t, p.json, p2.json, "a second run of the same start claims another name")
	require.True(t, strings.HasSuffix(p2.json, "-2.json"), p2.json)
	for _, f := range []struct{ got, golden string }{{p.json, "report.json"}, {p.markdown, "report.md"}} {
		got, err := os.ReadFile(f.got)
		require.NoError(t, err)
		golden := filepath.Join("testdata", "conformance", f.golden)
		if *updateConformance {
			require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
			require.NoError(t, os.WriteFile(golden, got, 0o644))
		}
		want, err := os.ReadFile(golden)
		require.NoError(t, err)
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%s (-golden +got):\n%s", f.golden, diff)
		}
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 4, "no temporary file is left behind")
	var back struct {
		Counts   map[Outcome]int `json:"counts"`
		Verdicts []Verdict       `json:"verdicts"`
	}
	b, err := os.ReadFile(p.json)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, map[Outcome]int{Pass: 1, Fail: 1, Skip: 1}, back.Counts)
	require.Equal(t, r.Verdicts, back.Verdicts)
}

func TestSafeText(t *testing.T) {
	for in, want := range map[string]string{
		"plain text":                 "plain text",
		"\x1b[31mred\x1b[0m":         `\u001b[31mred\u001b[0m`,
		"a\nb\r\tc":                  `a\nb\r\tc`,
		"bad \xff byte":              `bad \xff byte`,
		"rtl \u202e override":        `rtl \u202e override`,
		"c1 \u009b csi":              `c1 \u009b csi`,
		"unicode ümlaut and 日本":      "unicode ümlaut and 日本",
		strings.Repeat("x", 405):     strings.Repeat("x", 400) + "... (5 more bytes)",
		"ok\u2028line\ufeffbom\x7f.": `ok\u2028line\ufeffbom\u007f.`,
	} {
		require.Equal(t, want, safeText(in, 400), "%q", in)
	}
}

// TestConformanceCommand runs the command a user types, go test -run
// Conformance -v, in a child process against a loopback fake server that
// ignores max_tokens: the output has one verdict line per check, the
// max_tokens subtest fails and only it, and the verdict files are written
// to ANVIL_OUT.
func TestConformanceCommand(t *testing.T) {
	if os.Getenv(EnvBaseURL) != "" {
		t.Skip("runs its own server")
	}
	cfg := fakeserver.Fast()
	cfg.TimeScale = DefaultFakeTimeScale
	cfg.Faults.Probability = map[fakeserver.Fault]float64{fakeserver.FaultIgnoreMaxTokens: 1}
	srv := fakeserver.New(cfg)
	defer srv.Close()
	exe, err := os.Executable()
	require.NoError(t, err)
	out := t.TempDir()
	cmd := exec.CommandContext(t.Context(), exe, "-test.run=^TestConformance$", "-test.v")
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ANVIL_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, EnvBaseURL+"="+srv.BaseURL(), EnvOut+"="+out)
	b, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "the run must fail:\n%s", b)
	lines := regexp.MustCompile(`(?m)^    --- (PASS|FAIL|SKIP): TestConformance/(\w+)`).FindAllStringSubmatch(string(b), -1)
	got := map[string]string{}
	for _, l := range lines {
		got[l[2]] = l[1]
	}
	want := map[string]string{}
	for _, n := range ConformanceChecks() {
		want[n] = "PASS"
	}
	want[CheckMaxTokens] = "FAIL"
	want[CheckIsolation] = "SKIP" // capacity refuses completion tokens beyond max_tokens
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

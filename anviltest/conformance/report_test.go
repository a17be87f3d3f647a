package conformance

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func sampleReport() *Report {
	return &Report{
		BaseURL:   "http://127.0.0.1:8000/v1",
		Model:     "some|model",
		StartedAt: time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC),
		Verdicts: []Verdict{
			{Check: nameModels, Outcome: Skip, Reason: "no context length"},
			{Check: nameUsage, Outcome: Fail, Reason: "total_tokens 5 != 2 + 4", Notes: []string{"usage {...}"}},
			{Check: nameBadRequest, Outcome: Pass, Reason: `a <b> [link](x) | pipe \ back`},
		},
	}
}

// TestReportGolden pins the two verdict files' bytes.
func TestReportGolden(t *testing.T) {
	dir := t.TempDir()
	r := sampleReport()
	pj, pm, err := r.WriteFiles(dir)
	require.NoError(t, err)
	pj2, _, err := r.WriteFiles(dir)
	require.NoError(t, err)
	require.NotEqual(t, pj, pj2, "a second run of the same start claims another name")
	require.True(t, strings.HasSuffix(pj2, "-2.json"), pj2)
	for _, f := range []struct{ got, golden string }{{pj, "report.json"}, {pm, "report.md"}} {
		got, err := os.ReadFile(f.got)
		require.NoError(t, err)
		golden := filepath.Join("testdata", f.golden)
		if *update {
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
	b, err := os.ReadFile(pj)
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

// TestRequired: a name of Config.Required that is no check is refused
// with an *unknownCheckError; a required check's SKIP is a FAIL, any other
// verdict is left alone.
func TestRequired(t *testing.T) {
	_, err := New(t.Context(), Config{Target: capacity.Target{BaseURL: "http://127.0.0.1:1/v1"}, Required: []string{nameUsage, "usgae"}})
	var uc *unknownCheckError
	require.ErrorAs(t, err, &uc)
	require.Equal(t, unknownCheckError{Option: "Config.Required", Name: "usgae"}, *uc)

	s, err := New(t.Context(), Config{Target: capacity.Target{BaseURL: "http://127.0.0.1:1/v1"}, Required: []string{namePrefixCache}})
	require.NoError(t, err, "an unreachable server is judged, not refused")
	v := s.Check(t.Context(), "usgae")
	require.Equal(t, Fail, v.Outcome)
	require.Contains(t, v.Reason, `Suite.Check("usgae"): want one of models, stream_framing`)
	v = s.Check(t.Context(), nameModels)
	require.Equal(t, Fail, v.Outcome)
	require.Contains(t, v.Reason, "GET /models failed")

	got := s.apply(Verdict{Check: namePrefixCache, Outcome: Skip, Reason: "never reported"})
	require.Equal(t, Verdict{Check: namePrefixCache, Outcome: Fail, Reason: "required, but skipped: never reported"}, got)
	other := Verdict{Check: nameDeterminism, Outcome: Skip, Reason: "differs"}
	require.Equal(t, other, s.apply(other))
}

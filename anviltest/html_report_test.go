package anviltest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// TestHTMLWanted: withHTML wins, then ANVIL_HTML; a bad value names the
// variable and what it takes.
func TestHTMLWanted(t *testing.T) {
	for _, tc := range []struct {
		env  string
		opt  Option
		want bool
		err  string
	}{
		{"", nil, false, ""},
		{"1", nil, true, ""},
		{"0", nil, false, ""},
		{"true", withHTML(false), false, ""},
		{"", withHTML(true), true, ""},
		{"yes please", nil, false, `anviltest: ANVIL_HTML = "yes please": want 1 (write report.html beside the artifacts) or 0`},
	} {
		e := env{envHTML: tc.env}
		s := newSettings([]Option{WithEnvironment(e.get), tc.opt})
		got, err := s.htmlWanted()
		if tc.err != "" {
			require.EqualError(t, err, tc.err)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tc.want, got, "env %q", tc.env)
	}
}

// TestWriteHTMLReport: the page holds the runs of the directory that
// started at or after the given time, ignores files that are not
// capacity artifacts, and is refused when no run qualifies.
func TestWriteHTMLReport(t *testing.T) {
	dir := t.TempDir()
	seed, err := os.Open(filepath.Join("..", "testdata", "seed-capacity-v4-reasoning.json"))
	require.NoError(t, err)
	r, err := artifact.Read(seed)
	seed.Close()
	require.NoError(t, err)
	old := *r
	old.RunID = "benchmark-OLD"
	old.StartedAtUnixNS = r.StartedAtUnixNS - int64(time.Hour)
	require.NoError(t, old.WriteFile(filepath.Join(dir, "old.json")))
	require.NoError(t, r.WriteFile(filepath.Join(dir, "new.json")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "conformance.x.json"), []byte(`{"schema":"anvil-go.conformance/v1"}`), 0o644))

	page, err := writeHTMLReport(dir, time.Unix(0, r.StartedAtUnixNS))
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, htmlReportName), page)
	html, err := os.ReadFile(page)
	require.NoError(t, err)
	require.Contains(t, string(html), r.RunID)
	require.NotContains(t, string(html), "benchmark-OLD", "a run from before the test binary started is left out")
	require.True(t, strings.HasPrefix(string(html), "<!DOCTYPE html>"))

	_, err = writeHTMLReport(dir, time.Unix(0, r.StartedAtUnixNS+1))
	require.ErrorContains(t, err, "no artifact of this run")
}

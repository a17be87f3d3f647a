package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	fakeserver "github.com/anvilbench/anvil/fake_server"

	"github.com/anvilbench/anvil/capacity"
	"github.com/stretchr/testify/require"
)

const (
	seed     = "../../../testdata/seed-capacity-v4-reasoning.json"
	findings = "../../../testdata/corpus/docs/findings/"
)

func TestHTMLWritesOnePage(t *testing.T) {
	out := filepath.Join(t.TempDir(), "report.html")
	var stdout, stderr bytes.Buffer
	code := run([]string{"html", "-o", out, seed, findings + "2026-07-28-agents-a1-multimodal-qualification-evidence/fp8-moe-ab-default-v3-primary-r1.json"}, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	page, err := os.ReadFile(out)
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(page, []byte("<!DOCTYPE html>")))
	require.Equal(t, 4+1+2, bytes.Count(page, []byte(`<svg class="chart"`)), "4 CDFs, a scatter, 2 timelines")
	require.Empty(t, stdout.String())

	stdout.Reset()
	require.Equal(t, 0, run([]string{"html", seed}, &stdout, &stderr), "without -o: standard output")
	require.Contains(t, stdout.String(), "</html>")
}

func TestHTMLUsageAndReadErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"html"}, 2, "no ARTIFACT given"},
		{[]string{"html", "-x", seed}, 2, "flag provided but not defined: -x"},
		{[]string{"html", "-o"}, 2, "flag needs an argument"},
		{[]string{"html", "missing.json"}, 1, "missing.json: no such file or directory"},
		{[]string{"html", "-o", filepath.Join(t.TempDir(), "no", "dir.html"), seed}, 1, "no such file or directory"},
	} {
		var stdout, stderr bytes.Buffer
		require.Equal(t, tc.code, run(tc.args, &stdout, &stderr), "%v: %s", tc.args, stderr.String())
		require.Contains(t, stderr.String(), tc.msg, tc.args)
	}
}

func TestCompareExitCodes(t *testing.T) {
	data, err := os.ReadFile(seed)
	require.NoError(t, err)
	changed := filepath.Join(t.TempDir(), "changed.json")
	require.NoError(t, os.WriteFile(changed,
		bytes.Replace(data, []byte(`"context_tokens": 65536,`), []byte(`"context_tokens": 32768,`), 1), 0o644))
	// The seed's workload sent over Responses.
	responses := filepath.Join(t.TempDir(), "responses.json")
	require.NoError(t, os.WriteFile(responses,
		bytes.Replace(data, []byte("{"), []byte(`{"anvil_go": {"version": 1, "run": {"api": "responses"}},`), 1), 0o644))
	r1 := findings + "2026-07-28-agents-a1-multimodal-qualification-evidence/fp8-moe-ab-default-v3-primary-r1.json"
	r2 := findings + "2026-07-28-agents-a1-multimodal-qualification-evidence/fp8-moe-ab-default-v3-primary-r2.json"
	t1 := findings + "2026-07-28-agents-a1-multimodal-qualification-evidence/fp8-moe-ab-tuned-v3-primary-r1.json"
	t2 := findings + "2026-07-28-agents-a1-multimodal-qualification-evidence/fp8-moe-ab-tuned-v3-primary-r2.json"
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr []string
	}{
		{"seed against itself", []string{seed, seed}, 0,
			[]string{"workload (identical on every run): schema=", "significance needs >= 2 runs per side"}, nil},
		{"reference runs, two a side", []string{r1, r2, "--", t1, t2}, 0,
			[]string{"old: 2 run(s)  new: 2 run(s)", "engine: old \"vllm-f25953cc-default\"", "~ (p="}, nil},
		{"context changed", []string{seed, changed}, 1, nil,
			[]string{"not comparable: old (" + seed + ") and new (" + changed + ") are not one workload (1 identity key):", "context_tokens: old 65536, new 32768 (differs)"}},
		{"sides of different workloads", []string{seed, "--", r1}, 1, nil,
			[]string{"context_tokens: old 65536, new 8192", "concurrency: old 1, new 16", "max_tokens: old 8192, new 64"}},
		{"within a side", []string{seed, r1, "--", r2}, 1, nil, []string{"old run 1 (" + seed + ") and old run 2 (" + r1 + ") are not one workload"}},
		{"three files without --", []string{seed, r1, r2}, 2, nil, []string{"want OLD... -- NEW..."}},
		{"empty side", []string{seed, "--"}, 2, nil, []string{"each side needs at least one artifact"}},
		{"unreadable", []string{seed, "missing.json"}, 2, nil, []string{"missing.json: no such file or directory"}},
		{"flag", []string{"-x", seed}, 2, nil, []string{"unknown flag -x"}},
		{"two APIs", []string{seed, responses}, 1, nil, []string{`anvil_go.run.api: old "chat", new "responses" (differs)`}},
		{"across APIs", []string{"-across-api", seed, responses}, 0,
			[]string{"across APIs: old chat  new responses; by definition these differ:\n  - framing: ", "  - usage: Responses reports it only"}, nil},
		{"across APIs, flag after the files", []string{seed, "--", responses, "-across-api"}, 2, nil, []string{"unknown flag -across-api"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			require.Equal(t, tc.code, run(append([]string{"compare"}, tc.args...), &stdout, &stderr), stderr.String())
			for _, s := range tc.stdout {
				require.Contains(t, stdout.String(), s)
			}
			for _, s := range tc.stderr {
				require.Contains(t, stderr.String(), s)
			}
		})
	}
}

func TestUsageNamesHTMLAndCompare(t *testing.T) {
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"-h"}, &stdout, &stderr))
	for _, s := range []string{"anvilreport html [-o FILE] ARTIFACT...", "anvilreport compare [-across-api] OLD... -- NEW...",
		"0 comparable, 1 not comparable, 2 usage"} {
		require.True(t, strings.Contains(stdout.String(), s), s)
	}
	stdout.Reset()
	require.Equal(t, 0, run([]string{"compare", "-h"}, &stdout, &stderr))
	require.Contains(t, stdout.String(), "usage:")
}

// TestCompareAnvilRuns: two runs of one workload measured by this module
// (each with its anvil_go extension, its own run id and times) compare;
// a run of another context is refused naming context_tokens.
func TestCompareAnvilRuns(t *testing.T) {
	srv := fakeserver.New(fakeserver.Fast())
	defer srv.Close()
	dir := t.TempDir()
	runTo := func(name string, ctx int) string {
		rep, err := capacity.Run(t.Context(), capacity.Target{BaseURL: srv.URL + "/v1", Engine: "fake"},
			capacity.Workload{Requests: 4, Concurrency: 2, ContextTokens: ctx, MaxTokens: 32})
		require.NoError(t, err)
		require.NotNil(t, rep.AnvilGo)
		path := filepath.Join(dir, name)
		require.NoError(t, rep.WriteFile(path))
		return path
	}
	a, b, other := runTo("a.json", 2048), runTo("b.json", 2048), runTo("c.json", 1024)
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"compare", a, b}, &stdout, &stderr), stderr.String())
	require.Contains(t, stdout.String(), "workload (identical on every run)")
	stdout.Reset()
	stderr.Reset()
	require.Equal(t, 1, run([]string{"compare", a, other}, &stdout, &stderr))
	require.Contains(t, stderr.String(), "context_tokens: old 2048, new 1024")
}

// TestSummaryAcrossRuns: summary of several runs of one workload ends
// with the mean and 95% t-interval of each headline metric across them;
// the run of another workload is summarized alone and not mixed in.
func TestSummaryAcrossRuns(t *testing.T) {
	srv := fakeserver.New(fakeserver.Fast())
	defer srv.Close()
	dir := t.TempDir()
	runTo := func(name string, ctx int) string {
		rep, err := capacity.Run(t.Context(), capacity.Target{BaseURL: srv.URL + "/v1", Engine: "fake"},
			capacity.Workload{Requests: 4, Concurrency: 2, ContextTokens: ctx, MaxTokens: 32})
		require.NoError(t, err)
		path := filepath.Join(dir, name)
		require.NoError(t, rep.WriteFile(path))
		return path
	}
	a, b, c, other := runTo("a.json", 2048), runTo("b.json", 2048), runTo("c.json", 2048), runTo("o.json", 1024)
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"summary", a, b, other, c}, &stdout, &stderr), stderr.String())
	out := stdout.String()
	require.Equal(t, 4, strings.Count(out, "== "+dir), "each file summarized")
	i := strings.Index(out, "\n== across 3 runs of one workload: "+a+", "+b+", "+c+"\n")
	require.Positive(t, i, out)
	across := out[i:]
	require.NotContains(t, across, other)
	require.Regexp(t, `\n\s+TTFT p50\s+ms\s+3\s+[0-9.]+\s+[-0-9.]+\s+[0-9.]+\s+lower\n`, across)

	stdout.Reset()
	require.Equal(t, 0, run([]string{"summary", a}, &stdout, &stderr))
	require.NotContains(t, stdout.String(), "== across", "one run has no interval")
}

// TestCell: four significant digits, never an exponent.
func TestCell(t *testing.T) {
	for v, want := range map[float64]string{10624.4: "10624", 52.31: "52.31", 0.0012345: "0.001234", 0: "0.000", -4.3: "-4.300"} {
		require.Equal(t, want, cell(v), "%v", v)
	}
	require.Equal(t, "-", cell(math.NaN()))
}

package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"
)

func corpus(t *testing.T) []string {
	t.Helper()
	var paths []string
	err := filepath.WalkDir("../../../testdata/corpus", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".json") {
			paths = append(paths, p)
		}
		return err
	})
	require.NoError(t, err)
	return paths
}

// TestBenchConvertsTheWholeCorpus: every artifact of every generation
// becomes one result that benchstat's reader parses without error.
func TestBenchConvertsTheWholeCorpus(t *testing.T) {
	paths := corpus(t)
	require.Len(t, paths, 252)
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run(append([]string{"bench"}, paths...), &stdout, &stderr), stderr.String())
	require.Empty(t, stderr.String())
	require.Len(t, benchResults(t, stdout.Bytes(), "corpus.bench"), len(paths))
}

// benchResults parses data, named name, with benchstat's reader: its
// results, failing the test on a syntax error.
func benchResults(t *testing.T, data []byte, name string) []*benchfmt.Result {
	t.Helper()
	var rs []*benchfmt.Result
	r := benchfmt.NewReader(bytes.NewReader(data), name)
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.SyntaxError:
			t.Fatal(rec)
		case *benchfmt.Result:
			rs = append(rs, rec.Clone())
		}
	}
	require.NoError(t, r.Err())
	return rs
}

// TestNotCapacitySkipped: given a folder's *.json, where the
// conformance suite wrote its verdict beside the artifacts, bench, summary,
// html and compare skip what is not a capacity artifact with one line each
// and handle the rest with status 0; with nothing left they fail.
func TestNotCapacitySkipped(t *testing.T) {
	dir := t.TempDir()
	seed, err := os.ReadFile("../../../testdata/seed-capacity-v4-reasoning.json")
	require.NoError(t, err)
	verdict, err := os.ReadFile("testdata/conformance.json")
	require.NoError(t, err)
	other, err := os.ReadFile("../../../testdata/not-capacity/model_swap_promotion_evidence.json")
	require.NoError(t, err)
	files := map[string][]byte{
		"BenchmarkCapacity.20261201T082108Z.json":     seed,
		"conformance.20261201T215348.964800301Z.json": verdict,
		"evidence.json": other,
	}
	for name, data := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
	}
	all, err := filepath.Glob(filepath.Join(dir, "*.json"))
	require.NoError(t, err)
	require.Len(t, all, 3)
	for _, args := range [][]string{
		append([]string{"bench"}, all...),
		append([]string{"summary"}, all...),
		append([]string{"html", "-o", filepath.Join(dir, "report.html")}, all...),
		append(append(append([]string{"compare"}, all...), "--"), all...),
	} {
		var stdout, stderr bytes.Buffer
		require.Equal(t, 0, run(args, &stdout, &stderr), "%q: %s", args[0], stderr.String())
		lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
		want := 2
		if args[0] == "compare" {
			want = 4 // each side
		}
		require.Len(t, lines, want, "%s: one line per skipped file:\n%s", args[0], stderr.String())
		for _, l := range lines {
			require.Regexp(t, `^anvilreport: .*(conformance\.\S+|evidence)\.json: skipped: `, l)
		}
		require.Contains(t, stderr.String(), `schema: "anvil-go.conformance/v1", want "anvil-serving.benchmark/v1"`)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	require.NoError(t, err)
	require.Contains(t, string(page), "qwen38-swift15", "the page has the one artifact")

	for _, cmd := range []string{"bench", "summary", "html"} {
		var stdout, stderr bytes.Buffer
		args := []string{cmd, filepath.Join(dir, "conformance.20261201T215348.964800301Z.json"), filepath.Join(dir, "evidence.json")}
		require.Equal(t, 1, run(args, &stdout, &stderr), cmd)
		require.Contains(t, stderr.String(), "anvilreport "+cmd+": none of the 2 files is a capacity artifact\n")
		require.Empty(t, stdout.String(), cmd)
	}
}

func TestSummaryAndUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"summary", "../../../testdata/seed-capacity-v4-reasoning.json"}, &stdout, &stderr))
	require.Contains(t, stdout.String(), "request canaries 6/6 passed")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "anvilreport: no command\n"},
		{[]string{"bench"}, "anvilreport: bench: no FILE given\n"},
		{[]string{"summary"}, "anvilreport: summary: no FILE given\n"},
		{[]string{"plot", "x.json"}, `anvilreport: unknown command "plot": want bench, summary, html, compare or merge` + "\n"},
		{[]string{"bench", "-v", "x.json"}, "anvilreport: unknown flag -v (name a file beginning with - as ./-v)\n"},
	} {
		stdout.Reset()
		stderr.Reset()
		require.Equal(t, 2, run(tc.args, &stdout, &stderr), "%q", tc.args)
		require.True(t, strings.HasPrefix(stderr.String(), tc.want+"usage:"), "%q: %s", tc.args, stderr.String())
		require.Empty(t, stdout.String())
	}
	for _, args := range [][]string{{"-h"}, {"bench", "--help"}, {"help"}} {
		stdout.Reset()
		stderr.Reset()
		require.Equal(t, 0, run(args, &stdout, &stderr), "%q", args)
		require.True(t, strings.HasPrefix(stdout.String(), "usage:"), "%q: usage on stdout", args)
		require.Empty(t, stderr.String())
	}
}

// TestUnreadableFiles: each file that cannot be read or is not an
// artifact is named with the reason, the others are still converted, and
// the exit status is 1.
func TestUnreadableFiles(t *testing.T) {
	dir := t.TempDir()
	notJSON := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(notJSON, []byte("latency was fine\n"), 0o644))
	seed := "../../../testdata/seed-capacity-v4-reasoning.json"
	for _, cmd := range []string{"bench", "summary"} {
		var stdout, stderr bytes.Buffer
		code := run([]string{cmd, filepath.Join(dir, "missing.json"), notJSON, dir, seed}, &stdout, &stderr)
		require.Equal(t, 1, code, cmd)
		lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
		require.Len(t, lines, 3, "%s: one line per bad file:\n%s", cmd, stderr.String())
		require.Equal(t, "anvilreport: "+filepath.Join(dir, "missing.json")+": no such file or directory", lines[0])
		require.Equal(t, "anvilreport: "+notJSON+": artifact: read: document: invalid JSON at byte offset 0: invalid character 'l' looking for beginning of value", lines[1])
		require.Equal(t, "anvilreport: "+dir+": is a directory", lines[2])
		require.Contains(t, stdout.String(), "ctx=65536", "%s: the good file is still handled", cmd)
	}
}

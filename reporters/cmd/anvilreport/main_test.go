package main

import (
	"bytes"
	"io/fs"
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
	r := benchfmt.NewReader(&stdout, "corpus.bench")
	n := 0
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.SyntaxError:
			t.Fatal(rec)
		case *benchfmt.Result:
			n++
		}
	}
	require.NoError(t, r.Err())
	require.Equal(t, len(paths), n)
}

func TestNotCapacityIsReportedAndSkipped(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"bench", "../../../testdata/not-capacity/model_swap_promotion_evidence.json",
		"../../../testdata/seed-capacity-v4-reasoning.json"}, &stdout, &stderr)
	require.Equal(t, 1, code)
	require.Contains(t, stderr.String(), "model_swap_promotion_evidence.json: ")
	require.Contains(t, stdout.String(), "BenchmarkCapacity/ctx=65536/conc=1 6 ", "the good file is still converted")
}

func TestSummaryAndUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"summary", "../../../testdata/seed-capacity-v4-reasoning.json"}, &stdout, &stderr))
	require.Contains(t, stdout.String(), "request canaries 6/6 passed")
	for _, args := range [][]string{nil, {"bench"}, {"plot", "x.json"}} {
		stderr.Reset()
		require.Equal(t, 2, run(args, &stdout, &stderr), "%q", args)
		require.Contains(t, stderr.String(), "usage:")
	}
	stderr.Reset()
	require.Equal(t, 1, run([]string{"summary", "does-not-exist.json"}, &stdout, &stderr))
	require.Contains(t, stderr.String(), "does-not-exist.json")
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/merge"
)

// The shard corpus: a single-process run and the three shards cut from it
// (testdata/shards/README.md).
const shardDir = "../../../testdata/shards/"

var shardPaths = []string{shardDir + "shard-0.json", shardDir + "shard-1.json", shardDir + "shard-2.json"}

// mergeShards merges the corpus shards into a new file and returns its path.
func mergeShards(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "merged.json")
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run(append([]string{"merge", "-o", out}, shardPaths...), &stdout, &stderr), stderr.String())
	require.Equal(t, "merged 3 shards (24 requests, 24 succeeded, 0 failed) into "+out+"\n", stdout.String())
	require.Empty(t, stderr.String())
	return out
}

// TestMergeWritesTheSingleRun: the merged shards are the single-process
// artifact plus anvil_go.shards and the merged gap distribution, and the
// merge is what artifact.Merge gives.
func TestMergeWritesTheSingleRun(t *testing.T) {
	out := mergeShards(t)
	got, err := readReport(out)
	require.NoError(t, err)
	single, err := readReport(shardDir + "single.json")
	require.NoError(t, err)
	single.Metrics.PrefixCacheHitAvg = nil // not mergeable (PROTOCOL.md#merging-shards)
	require.Equal(t, single.Metrics, got.Metrics)
	require.Equal(t, single.RequestTimings, got.RequestTimings)
	require.Equal(t, single.WallClockMS, got.WallClockMS)
	require.Equal(t, 3, got.AnvilGo.Shards.Count)
	require.Equal(t, single.AnvilGo.ChunkTiming.ITLMS, got.AnvilGo.ChunkTiming.ITLMS)

	var shards []merge.Artifact
	for _, p := range shardPaths {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		shards = append(shards, merge.Artifact{Name: p, Data: data})
	}
	want, err := merge.Shards(shards...)
	require.NoError(t, err)
	var buf bytes.Buffer
	_, err = want.WriteTo(&buf)
	require.NoError(t, err)
	written, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Equal(t, buf.String(), string(written))
}

// TestMergedArtifactReads: html, compare and bench accept a merged
// artifact; compare of the single-process run with the 3-shard merge is
// comparable (exit 0).
func TestMergedArtifactReads(t *testing.T) {
	merged := mergeShards(t)
	var stdout, stderr bytes.Buffer

	page := filepath.Join(t.TempDir(), "merged.html")
	require.Equal(t, 0, run([]string{"html", "-o", page, merged}, &stdout, &stderr), stderr.String())
	html, err := os.ReadFile(page)
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(html, []byte("<!DOCTYPE html>")))
	require.Contains(t, string(html), "fake-fast")

	stdout.Reset()
	require.Equal(t, 0, run([]string{"compare", shardDir + "single.json", merged}, &stdout, &stderr), stderr.String())
	require.Contains(t, stdout.String(), "workload (identical on every run)")

	stdout.Reset()
	require.Equal(t, 0, run([]string{"bench", merged}, &stdout, &stderr), stderr.String())
	rs := benchResults(t, stdout.Bytes(), "merged.bench")
	require.Len(t, rs, 1)
	require.Contains(t, string(rs[0].Name), "rate=40")
}

// TestMergeRefusals: bad usage exits 2; an output that is an input or not
// a regular file, and shards that do not merge, exit 1 naming the problem,
// and nothing is written.
func TestMergeRefusals(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "link.json")
	require.NoError(t, os.Symlink(shardPaths[0], link))
	copyOf := filepath.Join(dir, "copy-of-shard-1.json")
	data, err := os.ReadFile(shardPaths[1])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(copyOf, data, 0o644))
	hard := filepath.Join(dir, "hard.json")
	require.NoError(t, os.Link(copyOf, hard))
	out := filepath.Join(dir, "merged.json")
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no -o", shardPaths, 2, "-o FILE is required"},
		{"-o stdout", append([]string{"-o", "-"}, shardPaths...), 2, "-o FILE is required"},
		{"no shard", []string{"-o", out}, 2, "no SHARD artifact given"},
		{"unknown flag", []string{"-x"}, 2, "flag provided but not defined: -x"},
		{"over an input", append([]string{"-o", shardPaths[2]}, shardPaths...), 1, "refusing to write over the input " + shardPaths[2]},
		{"over an input by another name", []string{"-o", hard, shardPaths[0], copyOf, shardPaths[2]}, 1, "refusing to write over the input " + copyOf + " (the same file)"},
		{"over a directory", append([]string{"-o", dir}, shardPaths...), 1, "refusing to write over something that is not a regular file"},
		{"over a symbolic link", append([]string{"-o", link}, shardPaths...), 1, "refusing to write over something that is not a regular file"},
		{"missing shard", []string{"-o", out, shardPaths[0], shardPaths[2]}, 1, "shard 1 of 3 is missing"},
		{"duplicate shard", []string{"-o", out, shardPaths[0], shardPaths[1], copyOf, shardPaths[2]}, 1, "duplicate shard 1 of 3"},
		{"unreadable", []string{"-o", out, shardPaths[0], filepath.Join(dir, "nope.json")}, 1, "nope.json: no such file or directory"},
		{"not a shard", []string{"-o", out, shardDir + "single.json"}, 1, "is not a shard artifact (it has no anvil_go.shard)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			require.Equal(t, tc.code, run(append([]string{"merge"}, tc.args...), &stdout, &stderr), stderr.String())
			require.Contains(t, stderr.String(), tc.msg)
			require.Empty(t, stdout.String())
			_, err := os.Stat(out)
			require.ErrorIs(t, err, os.ErrNotExist, "nothing written")
		})
	}
	after, err := os.ReadFile(shardPaths[2])
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(after), "{"), "the input is intact")
}

package anviltest

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/artifact"
)

func TestArtifactStem(t *testing.T) {
	r := &artifact.Report{StartedAtUnixNS: 1_800_000_000_123_456_789}
	for _, tc := range []struct{ name, want string }{
		{"BenchmarkCapacity", "BenchmarkCapacity.20270115T080000.123456789Z"},
		// "/" separates sub-benchmarks; "=" would read as benchstat's
		// label=path; spaces, quotes and the like are dropped.
		{"BenchmarkCapacity/ctx=32768/conc=4", "BenchmarkCapacity__ctx-32768__conc-4.20270115T080000.123456789Z"},
		{"BenchmarkX/a b'c*?", "BenchmarkX__abc.20270115T080000.123456789Z"},
	} {
		require.Equal(t, tc.want, artifactStem(tc.name, r), tc.name)
	}
}

func TestWriteArtifactsNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	r := readSeed(t)
	var paths []artifactPaths
	for range 3 {
		p, err := writeArtifacts(dir, "BenchmarkCapacity/ctx=65536", "BenchmarkCapacity/ctx=65536-2", r)
		require.NoError(t, err)
		paths = append(paths, p)
	}
	stamp := "20261005T114224.279383700Z"
	require.Equal(t, filepath.Join(dir, "BenchmarkCapacity__ctx-65536."+stamp+".json"), paths[0].json)
	require.Equal(t, filepath.Join(dir, "BenchmarkCapacity__ctx-65536."+stamp+"-2.bench"), paths[1].bench)
	require.Equal(t, filepath.Join(dir, "BenchmarkCapacity__ctx-65536."+stamp+"-3.json"), paths[2].json)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 6, "no temporary file is left behind")
	for _, e := range entries {
		info, err := e.Info()
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o644), info.Mode().Perm(), e.Name())
	}
	bench, err := os.ReadFile(paths[0].bench)
	require.NoError(t, err)
	require.Contains(t, string(bench), "\nBenchmarkCapacity/ctx=65536-2 6 ")
	require.Equal(t, readArtifact(t, paths[0].json).RunID, r.RunID)
}

func TestWriteArtifactsFailsOnAMissingDirectory(t *testing.T) {
	_, err := writeArtifacts(filepath.Join(t.TempDir(), "gone"), "BenchmarkX", "BenchmarkX", readSeed(t))
	require.ErrorContains(t, err, "gone")
}

func readSeed(t *testing.T) *artifact.Report {
	return readArtifact(t, "../testdata/seed-capacity-v4-reasoning.json")
}

func TestIdentityNote(t *testing.T) {
	require.Empty(t, identityNote(capacity.Target{BaseURL: "http://h/v1", Engine: "vllm-0.11", GPU: "h100"}))
	require.Equal(t, "ANVIL_ENGINE and ANVIL_GPU not set: the artifact and the .bench file carry no engine or gpu, so benchstat cannot tell runs on different setups apart",
		identityNote(capacity.Target{BaseURL: "http://h/v1"}))
	require.Equal(t, "ANVIL_GPU not set: the artifact and the .bench file carry no gpu, so benchstat cannot tell runs on different setups apart",
		identityNote(capacity.Target{BaseURL: "http://h/v1", Engine: "vllm-0.11"}))
}

// TestWriteArtifactsFailureLeavesNoFile: a write that fails part way
// (here the encoder, after part of the document: a report JSON cannot
// hold) leaves no .json, empty or partial, no .bench and no temporary
// file, so `anvilreport bench dir/*.json` never meets a broken file.
func TestWriteArtifactsFailureLeavesNoFile(t *testing.T) {
	dir := t.TempDir()
	r := readSeed(t)
	r.RequestTimings[len(r.RequestTimings)-1].E2EMS = math.NaN()
	_, err := writeArtifacts(dir, "BenchmarkCapacity", "BenchmarkCapacity-2", r)
	require.ErrorContains(t, err, "non-finite")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "nothing is left behind")
}

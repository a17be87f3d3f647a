package reporters

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// seedPath is the golden artifact of the repository.
var seedPath = filepath.Join("..", "testdata", "seed-capacity-v4-reasoning.json")

// corpusFiles lists the reference tool's artifacts under testdata/corpus.
func corpusFiles(t testing.TB) []string {
	t.Helper()
	var files []string
	require.NoError(t, filepath.WalkDir(filepath.Join("..", "testdata", "corpus"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".json") {
			files = append(files, path)
		}
		return err
	}))
	require.Len(t, files, 252)
	return files
}

// loadReport reads the artifact at path.
func loadReport(t testing.TB, path string) *artifact.Report {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r, err := artifact.Read(f)
	require.NoError(t, err, path)
	return r
}

// writeBenchfmt writes reports to w with one BenchWriter, each named as
// BenchResult names it.
func writeBenchfmt(w io.Writer, reports ...*artifact.Report) error {
	bw := NewBenchWriter(w)
	for i, r := range reports {
		if err := bw.Write(r, ""); err != nil {
			return fmt.Errorf("report %d: %w", i, err)
		}
	}
	return nil
}

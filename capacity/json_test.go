package capacity

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// corpusFiles lists every artifact under testdata/corpus.
func corpusFiles(t testing.TB) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(filepath.Join("..", "testdata", "corpus"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(path) == ".json" {
			files = append(files, path)
		}
		return err
	})
	require.NoError(t, err)
	require.Len(t, files, 252)
	return files
}

func TestCorpusBytesRoundTrip(t *testing.T) {
	files := append(corpusFiles(t), filepath.Join("..", "testdata", "seed-capacity-v4-reasoning.json"))
	same := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		var r Report
		require.NoError(t, r.UnmarshalJSON(data), f)
		out, err := r.MarshalJSON()
		require.NoError(t, err)
		out = append(out, '\n')
		if string(out) == string(data) {
			same++
		} else {
			t.Logf("differs: %s", f)
		}
	}
	t.Logf("%d of %d byte-identical", same, len(files))
}

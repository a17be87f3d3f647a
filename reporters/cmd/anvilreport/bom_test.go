package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestArtifactWithBOMOrDuplicateKey: an artifact saved with a UTF-8 byte
// order mark (as Windows editors save it) reads as without one; one with
// a key twice is refused, naming the key.
func TestArtifactWithBOMOrDuplicateKey(t *testing.T) {
	data, err := os.ReadFile(seed)
	require.NoError(t, err)
	dir := t.TempDir()
	bom := filepath.Join(dir, "bom.json")
	require.NoError(t, os.WriteFile(bom, append([]byte("\xef\xbb\xbf"), data...), 0o644))
	var plain, withBOM, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"summary", seed}, &plain, &stderr), stderr.String())
	require.Equal(t, 0, run([]string{"summary", bom}, &withBOM, &stderr), stderr.String())
	body := func(b bytes.Buffer) string { _, rest, _ := strings.Cut(b.String(), "\n"); return rest } // past the file name
	require.Equal(t, body(plain), body(withBOM))

	dup := filepath.Join(dir, "dup.json")
	i := bytes.Index(data, []byte(`"completed": `))
	require.Positive(t, i)
	twice := append(append(append([]byte{}, data[:i]...), `"completed": 0, `...), data[i:]...)
	require.NoError(t, os.WriteFile(dup, twice, 0o644))
	var out bytes.Buffer
	stderr.Reset()
	require.Equal(t, 1, run([]string{"summary", dup}, &out, &stderr))
	require.Contains(t, stderr.String(), `completed: duplicate key "completed"`)
	require.False(t, strings.Contains(out.String(), "succeeded"), "nothing summarized")
}

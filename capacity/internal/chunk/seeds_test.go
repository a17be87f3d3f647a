package chunk

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// captureGlobs are the SSE captures of the repository, from real engines
// (testdata/transcripts) and from the fake server's dialects of them.
var captureGlobs = []string{
	"../../../testdata/transcripts/*.sse",
	"../../../fake_server/testdata/transcripts/*.sse",
	"../../../fake_server/testdata/golden/*.sse",
}

// capturedPayloads returns the data of every event of every capture, but
// the terminal [DONE], keyed by "file:line" of the event's first data line.
// An event's data lines are joined with line feeds, as SSE defines.
func capturedPayloads(tb testing.TB) map[string][]byte {
	tb.Helper()
	out := map[string][]byte{}
	for _, g := range captureGlobs {
		files, err := filepath.Glob(g)
		require.NoError(tb, err)
		for _, f := range files {
			text, err := os.ReadFile(f)
			require.NoError(tb, err)
			var (
				data  []byte
				first int
			)
			emit := func() {
				if first > 0 && string(bytes.TrimSpace(data)) != "[DONE]" {
					out[filepath.Base(f)+":"+strconv.Itoa(first)] = data
				}
				data, first = nil, 0
			}
			sc := bufio.NewScanner(bytes.NewReader(text))
			sc.Buffer(nil, 1<<20)
			for n := 1; sc.Scan(); n++ {
				line := bytes.TrimSuffix(sc.Bytes(), []byte("\r"))
				if len(line) == 0 {
					emit()
					continue
				}
				field, ok := bytes.CutPrefix(line, []byte("data:"))
				if !ok {
					continue
				}
				field = bytes.TrimPrefix(field, []byte(" "))
				if first == 0 {
					first = n
				} else {
					data = append(data, '\n')
				}
				data = append(data, field...)
			}
			emit()
			require.NoError(tb, sc.Err())
		}
	}
	require.NotEmpty(tb, out, "no captures found under %v", captureGlobs)
	return out
}

package artifact

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

var notCapacity = filepath.Join("..", "..", "testdata", "not-capacity")

// exact compares Reports completely, the remembered key sets and raw
// unknown keys included.
var exact = cmp.Exporter(func(reflect.Type) bool { return true })

func readFile(t testing.TB, path string) (*Report, []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	r, err := Read(bytes.NewReader(data))
	require.NoError(t, err, path)
	return r, data
}

// TestCorpusRoundTrip: every artifact of every generation reads, and
// read -> WriteFile -> read is lossless: the same Report (key sets and
// unknown keys included), the same keys and number literals at every
// level of the written document (so *_unix_ns stay exact), and for files
// the Python tool wrote with its usual layout, the same bytes.
func TestCorpusRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for i, f := range append(corpusFiles(t), seedPath) {
		r1, data := readFile(t, f)
		out := filepath.Join(dir, "artifact.json")
		require.NoError(t, r1.WriteFile(out))
		r2, written := readFile(t, out)
		if diff := cmp.Diff(r1, r2, exact); diff != "" {
			t.Fatalf("%s: read -> write -> read differs:\n%s", f, diff)
		}
		require.Equal(t, generic(t, data), generic(t, written), f)
		if bytes.Count(data, []byte("\n")) > 1 {
			require.Equal(t, string(bytes.TrimSuffix(data, []byte("\n")))+"\n", string(written), f)
		}
		if i == 252 { // the seed
			require.Equal(t, int64(1791200544279383700), r2.StartedAtUnixNS)
			require.Equal(t, int64(1791200586664844800), r2.FinishedAtUnixNS)
		}
	}
}

func TestNotCapacityRejected(t *testing.T) {
	entries, err := os.ReadDir(notCapacity)
	require.NoError(t, err)
	require.Len(t, entries, 2)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(notCapacity, e.Name()))
		require.NoError(t, err)
		_, err = Read(bytes.NewReader(data))
		require.ErrorIs(t, err, ErrNotArtifact, e.Name())
	}
}

// endless is an io.Reader of n bytes: "{" then spaces.
type endless struct{ n, off int }

func (r *endless) Read(p []byte) (int, error) {
	if r.off >= r.n {
		return 0, io.EOF
	}
	k := min(len(p), r.n-r.off)
	for i := range k {
		p[i] = ' '
		if r.off+i == 0 {
			p[i] = '{'
		}
	}
	r.off += k
	return k, nil
}

func TestReadErrors(t *testing.T) {
	seed, err := os.ReadFile(seedPath)
	require.NoError(t, err)
	mutate := func(old, new string) string {
		require.Contains(t, string(seed), old)
		return strings.Replace(string(seed), old, new, 1)
	}
	tests := []struct {
		name string
		in   io.Reader
		want string
	}{
		{"over 100 MiB", &endless{n: MaxBytes + 1}, "input exceeds the 104857600-byte (100 MiB) limit"},
		{"empty", strings.NewReader(""), "empty input"},
		{"truncated", strings.NewReader(string(seed[:len(seed)/2])), "truncated JSON at byte offset"},
		{"top-level array", strings.NewReader("[" + string(seed) + "]"), "want a JSON object at top level, got an array"},
		{"top-level string", strings.NewReader(`"anvil"`), "want a JSON object at top level, got a string"},
		{"missing schema", strings.NewReader(mutate(`"schema": "anvil-serving.benchmark/v1",`, ``)), "schema: missing"},
		{"wrong schema", strings.NewReader(mutate(`benchmark/v1"`, `benchmark/v0"`)), `schema: "anvil-serving.benchmark/v0", want "anvil-serving.benchmark/v1"`},
		{"bare NaN", strings.NewReader(mutate(`"wall_clock_ms": 42385.45840000006`, `"wall_clock_ms": NaN`)), "bare NaN at byte offset"},
		{"bare Infinity", strings.NewReader(mutate(`"tpot_ms": 4.310998571431161`, `"tpot_ms": Infinity`)), "bare Infinity at byte offset"},
		{"bare -Infinity", strings.NewReader(mutate(`"ttft_max_ms": 10017.000400002871`, `"ttft_max_ms": -Infinity`)), "bare -Infinity at byte offset"},
		{"string for number", strings.NewReader(mutate(`"wall_clock_ms": 42385.45840000006`, `"wall_clock_ms": "42s"`)), `wall_clock_ms: want a number, got a string "42s"`},
		{"row field type", strings.NewReader(mutate(`"content_chunks": 5,`, `"content_chunks": null,`)), "request_timings[1].content_chunks: want an integer, got null"},
		{"row output tokens type", strings.NewReader(mutate(`"output_tokens": 519`, `"output_tokens": "519"`)), "request_timings[1].output_tokens: want an integer, got a string"},
		{"nested type", strings.NewReader(mutate(`"marker_at_start": true`, `"marker_at_start": 1`)), "request_timings[0].request_canary.marker_at_start: want a boolean, got a number 1"},
		{"metrics type", strings.NewReader(mutate(`"ttft_samples": 6`, `"ttft_samples": [6]`)), "metrics.ttft_samples: want an integer, got an array"},
		{"unix ns float", strings.NewReader(mutate(`"started_at_unix_ns": 1791200544279383700`, `"started_at_unix_ns": 1.7912005442793837e18`)), "started_at_unix_ns: want an integer in the int64 range"},
		{"negative requests", strings.NewReader(mutate(`"requests": 6`, `"requests": -6`)), "requests: -6 is negative"},
		{"negative completed", strings.NewReader(mutate(`"completed": 6`, `"completed": -1`)), "completed: -1 is negative"},
		{"negative responses", strings.NewReader(mutate(`"responses_received": 6`, `"responses_received": -2`)), "responses_received: -2 is negative"},
		{"missing required key", strings.NewReader(mutate(`"requests": 6,`, ``)), "requests: missing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Read(tc.in)
			require.Nil(t, r)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestReadReaderError(t *testing.T) {
	_, err := Read(failingReader{})
	require.ErrorContains(t, err, "disk on fire")
}

func TestWriteFileAtomic(t *testing.T) {
	r, data := readFile(t, seedPath)
	dir := t.TempDir()
	path := filepath.Join(dir, "run.json")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o600))
	require.NoError(t, r.WriteFile(path))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(data)+"\n", string(got), "2-space indent, sorted keys, trailing newline")
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), info.Mode().Perm())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file left behind")

	// A report JSON cannot hold fails before touching the target.
	r.WallClockMS = nan()
	require.ErrorContains(t, r.WriteFile(path), "non-finite")
	got, err = os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(data)+"\n", string(got))
	entries, err = os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1)

	require.Error(t, r.WriteFile(filepath.Join(dir, "missing", "run.json")))
	require.ErrorContains(t, (*Report)(nil).WriteFile(path), "nil report")
}

func nan() float64 {
	zero := 0.0
	return zero / zero
}

func TestWriteTo(t *testing.T) {
	r, data := readFile(t, seedPath)
	var buf bytes.Buffer
	n, err := r.WriteTo(&buf)
	require.NoError(t, err)
	require.Equal(t, string(data)+"\n", buf.String())
	require.Equal(t, int64(buf.Len()), n, "WriteTo counts the bytes written")
	_, err = (*Report)(nil).WriteTo(&buf)
	require.ErrorContains(t, err, "nil report")
}

// FuzzRead: Read never panics; whatever it accepts writes back to
// a document it reads as the same Report, and writing is then stable.
func FuzzRead(f *testing.F) {
	for _, p := range []string{seedPath, filepath.Join(notCapacity, "local_benchmark_sample.json")} {
		data, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(data)
	}
	f.Add([]byte(`{"schema": "anvil-serving.benchmark/v1", "base_url": "", "completed": 1, "concurrency": 1,
		"context_tokens": 8192, "max_context_tokens": null, "max_tokens": 64, "metrics": {"x": [1.0, {"y": null}]},
		"model": "m", "requests": 1, "run_id": "r", "serve_flags": {}, "failures": [{"request_index": 0}]}`))
	f.Add([]byte(`{"x": NaN}`))
	f.Add([]byte(`[1, 2`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		var first bytes.Buffer
		require.NoError(t, write(&first, r))
		back, err := Read(bytes.NewReader(first.Bytes()))
		require.NoError(t, err, "re-reading what was written:\n%s", first.String())
		if diff := cmp.Diff(r, back, exact); diff != "" {
			t.Fatalf("read -> write -> read differs:\n%s", diff)
		}
		var second bytes.Buffer
		require.NoError(t, write(&second, back))
		require.Equal(t, first.String(), second.String())
	})
}

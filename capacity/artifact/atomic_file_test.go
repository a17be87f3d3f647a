package artifact

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// fullDisk is a temporary file whose writes go to /dev/full, so every
// write fails with ENOSPC as on a full disk, while the temporary name
// really exists (and must be removed).
type fullDisk struct {
	*os.File // the real temporary file: Name, Chmod, Sync, Close
	full     *os.File
}

func (f fullDisk) Write(p []byte) (int, error) { return f.full.Write(p) }

func (f fullDisk) Close() error { return errors.Join(f.full.Close(), f.File.Close()) }

// fullFS is a file system whose temporary files sit on a full disk.
func fullFS(t *testing.T) fileSystem {
	t.Helper()
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full on this system")
	}
	return fileSystem{createTemp: func(dir, pattern string) (tempFile, error) {
		f, err := os.CreateTemp(dir, pattern)
		if err != nil {
			return nil, err
		}
		full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
		if err != nil {
			f.Close()
			return nil, err
		}
		return fullDisk{f, full}, nil
	}}
}

// cutAfter writes n bytes of doc and then fails, as an encoder or a
// source that breaks half way.
func cutAfter(doc []byte, n int) func(io.Writer) error {
	return func(w io.Writer) error {
		if _, err := w.Write(doc[:n]); err != nil {
			return err
		}
		return errors.New("source broke half way")
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestAtomicWriteFailureLeavesNothing: a full disk (ENOSPC from
// /dev/full) or a writer failing half way leaves no file under the target
// name, no temporary file, and an existing target untouched; the error
// names the path and keeps the cause.
func TestAtomicWriteFailureLeavesNothing(t *testing.T) {
	// A document of about 40 KB (an artifact's size), below the buffer.
	doc := bytes.Repeat([]byte("{\"request_index\": 0}\n"), 2000)
	small := func(w io.Writer) error { _, err := w.Write(doc); return err }
	full := fullFS(t)
	for _, tc := range []struct {
		name  string
		fsys  fileSystem
		write func(io.Writer) error
		cause error
	}{
		// The small document fails at Flush; a large one in Write itself.
		{"disk full", full, small, syscall.ENOSPC},
		{"disk full, large", full, func(w io.Writer) error {
			_, err := w.Write(make([]byte, 1<<20))
			return err
		}, syscall.ENOSPC},
		{"writer fails half way", osFiles, cutAfter(doc, 1000), nil},
	} {
		for _, create := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/create=%t", tc.name, create), func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, "run.json")
				err := tc.fsys.write(path, tc.write, create)
				require.Error(t, err)
				require.ErrorContains(t, err, path)
				if tc.cause != nil {
					require.ErrorIs(t, err, tc.cause)
				}
				require.Empty(t, dirNames(t, dir), "nothing is left behind")

				// An existing file is left as it was.
				require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
				require.Error(t, tc.fsys.write(path, tc.write, create))
				got, err := os.ReadFile(path)
				require.NoError(t, err)
				require.Equal(t, "old", string(got))
				require.Equal(t, []string{"run.json"}, dirNames(t, dir))
			})
		}
	}
}

func TestCreateNeverReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.bench")
	write := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	require.NoError(t, CreateFile(path, write("first\n")))
	err := CreateFile(path, write("second\n"))
	require.ErrorIs(t, err, fs.ErrExist)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "first\n", string(got))
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, fs.FileMode(0o644), info.Mode().Perm())
	require.Equal(t, []string{"run.bench"}, dirNames(t, dir), "no temporary file left behind")

	require.NoError(t, WriteFile(path, write("replaced\n")))
	got, err = os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "replaced\n", string(got))
	require.Equal(t, []string{"run.bench"}, dirNames(t, dir))
}

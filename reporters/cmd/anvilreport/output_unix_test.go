//go:build unix

package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHTMLNeverOverwritesAnInputOrWhatIsNotARegularFile: html -o refuses
// its own input (by its name, through a linked directory, a hard link), a
// FIFO, a symbolic link and a device (/dev/null) with exit status 1 and a
// message naming the path; each is left as it was.
func TestHTMLNeverOverwritesAnInputOrWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	seedBytes, err := os.ReadFile(seed)
	require.NoError(t, err)
	in := filepath.Join(dir, "in.json")
	require.NoError(t, os.WriteFile(in, seedBytes, 0o644))
	hard := filepath.Join(dir, "hard.json")
	require.NoError(t, os.Link(in, hard))
	fifo := filepath.Join(dir, "pipe.html")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	other := filepath.Join(dir, "other.html")
	require.NoError(t, os.WriteFile(other, []byte("kept"), 0o644))
	link := filepath.Join(dir, "link.html")
	require.NoError(t, os.Symlink(other, link))
	alias := filepath.Join(dir, "alias")
	require.NoError(t, os.Symlink(dir, alias))

	for _, tc := range []struct {
		name, out, msg string
		kind           fs.FileMode
	}{
		{"its own input", in, "is one of the input files", 0},
		{"the input by another name", filepath.Join(alias, "in.json"), "is one of the input files", 0},
		{"a hard link to the input", hard, "is one of the input files", 0},
		{"a FIFO", fifo, "not a regular file (a FIFO)", fs.ModeNamedPipe},
		{"a symbolic link", link, "not a regular file (a symbolic link)", fs.ModeSymlink},
		{"a device", "/dev/null", "not a regular file (a character device)", fs.ModeDevice | fs.ModeCharDevice},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run([]string{"html", "-o", tc.out, in}, &stdout, &stderr)
			require.Equal(t, 1, code, stderr.String())
			require.Contains(t, stderr.String(), tc.msg)
			require.Contains(t, stderr.String(), tc.out)
			fi, err := os.Lstat(tc.out)
			require.NoError(t, err)
			require.Equal(t, tc.kind, fi.Mode().Type())
		})
	}
	got, err := os.ReadFile(in)
	require.NoError(t, err)
	require.Equal(t, seedBytes, got, "the input is untouched")
	got, err = os.ReadFile(other)
	require.NoError(t, err)
	require.Equal(t, "kept", string(got), "the link's target is untouched")

	// A regular file that is no input is replaced.
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"html", "-o", other, in}, &stdout, &stderr), stderr.String())
	got, err = os.ReadFile(other)
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(got, []byte("<!DOCTYPE html>")))
}

//go:build unix

package artifact

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWritersNeverReplaceWhatIsNotARegularFile: a FIFO, a symbolic link and
// a device (/dev/null) are refused by both writers with errNotRegularFile
// and stay what they were; nothing is left in their directory.
func TestWritersNeverReplaceWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	target := filepath.Join(dir, "target.html")
	require.NoError(t, os.WriteFile(target, []byte("kept"), 0o644))
	link := filepath.Join(dir, "link.html")
	require.NoError(t, os.Symlink(target, link))
	dangling := filepath.Join(dir, "dangling.html")
	require.NoError(t, os.Symlink(filepath.Join(dir, "nowhere"), dangling))
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))

	write := func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }
	for _, tc := range []struct {
		path string
		kind fs.FileMode
		what string
	}{
		{fifo, fs.ModeNamedPipe, "a FIFO"},
		{link, fs.ModeSymlink, "a symbolic link"},
		{dangling, fs.ModeSymlink, "a symbolic link"},
		{"/dev/null", fs.ModeDevice | fs.ModeCharDevice, "a character device"},
		{sub, fs.ModeDir, "a directory"},
	} {
		for name, fn := range map[string]func(string, func(io.Writer) error) error{"WriteFile": WriteFile, "CreateFile": CreateFile} {
			err := fn(tc.path, write)
			require.ErrorIs(t, err, errNotRegularFile, "%s %s", name, tc.path)
			require.ErrorContains(t, err, tc.what)
			require.ErrorContains(t, err, tc.path)
			fi, lerr := os.Lstat(tc.path)
			require.NoError(t, lerr)
			require.Equal(t, tc.kind, fi.Mode().Type(), "%s left %s as it was", name, tc.path)
		}
	}
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	require.Equal(t, "kept", string(b), "the link's target is untouched")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 5, "no temporary file left behind")

	// A regular file is still replaced.
	require.NoError(t, WriteFile(target, write))
	b, err = os.ReadFile(target)
	require.NoError(t, err)
	require.Equal(t, "new", string(b))
}

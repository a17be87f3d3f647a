package artifact

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Every file this module writes (the JSON artifact, the .bench file, the
// HTML page, later outputs) goes through one atomic writer: the bytes go
// to a temporary file in the target's directory, which is synced to disk,
// given mode 0644 and only then put in place (renamed over the target, or
// hard-linked to a name that must not exist yet). A reader sees no file or
// the complete one, never a partial or empty file, whatever fails (a full
// disk, a write error, an encoder error half way); on any error the
// temporary file is removed and the target is left as it was.

// filePerm is the mode of every file written.
const filePerm = 0o644

// WriteFileFunc writes the bytes write produces to path atomically,
// replacing path if it exists. write gets a buffered writer; its error,
// or any error writing, syncing or renaming, is returned wrapped, naming
// path, and nothing is left behind.
func WriteFileFunc(path string, write func(io.Writer) error) error {
	return osFiles.write(path, write, false)
}

// CreateFileFunc is WriteFileFunc for a name that must be new: if path
// exists, it fails with an error matching fs.ErrExist and path is left
// alone. The complete file appears under path in one step (a hard link
// of the synced temporary file; where the file system has no hard links,
// path is claimed empty with O_EXCL and the temporary file renamed over
// it, and removed again on failure).
func CreateFileFunc(path string, write func(io.Writer) error) error {
	return osFiles.write(path, write, true)
}

// tempFile is the part of *os.File the atomic writer uses.
type tempFile interface {
	io.Writer
	Name() string
	Chmod(fs.FileMode) error
	Sync() error
	Close() error
}

// fileSystem is the atomic writer's seam to the operating system; tests
// replace createTemp to fail part way.
type fileSystem struct {
	createTemp func(dir, pattern string) (tempFile, error)
}

// osFiles is the real file system.
var osFiles = fileSystem{
	createTemp: func(dir, pattern string) (tempFile, error) { return os.CreateTemp(dir, pattern) },
}

// write is WriteFileFunc (create false) and CreateFileFunc (create true).
func (fsys fileSystem) write(path string, write func(io.Writer) error, create bool) (err error) {
	dir := filepath.Dir(path)
	tmp, err := fsys.createTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("artifact: write %s: %w", path, err)
	}
	closed := false
	defer func() {
		if !closed {
			tmp.Close()
		}
		// After a link, the temporary name is a second name of the file;
		// after a rename it no longer exists. Either way it goes.
		os.Remove(tmp.Name())
	}()
	bw := bufio.NewWriterSize(tmp, 256<<10)
	if err := write(bw); err != nil {
		return fmt.Errorf("%w (to %s)", err, path)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("artifact: write %s: %w", path, err)
	}
	if err := tmp.Chmod(filePerm); err != nil {
		return fmt.Errorf("artifact: write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("artifact: sync %s: %w", path, err)
	}
	closed = true
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("artifact: write %s: %w", path, err)
	}
	if create {
		err = placeNew(tmp.Name(), path)
	} else {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("artifact: write %s: %w", path, err)
	}
	// Make the new name durable. Not every platform can sync a directory;
	// the file itself is already on disk.
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// placeNew gives the complete file tmp the new name path, failing with
// fs.ErrExist if path exists.
func placeNew(tmp, path string) error {
	err := os.Link(tmp, path)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return err
	}
	// No hard links here: claim the name, then rename over the claim.
	f, cerr := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, filePerm)
	if cerr != nil {
		return cerr
	}
	f.Close()
	if rerr := os.Rename(tmp, path); rerr != nil {
		os.Remove(path)
		return rerr
	}
	return nil
}

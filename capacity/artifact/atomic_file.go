package artifact

// Atomic files: every file this module writes (the JSON artifact, the .bench file, the HTML page, the
// conformance report) goes through it: the bytes go to a temporary file in
// the target's directory, which is synced to disk, given mode 0644 and only
// then put in place (renamed over the target, or hard-linked to a name that
// must not exist yet). A reader sees no file or the complete one, never a
// partial or empty file, whatever fails (a full disk, a write error, an
// encoder error half way); on any error the temporary file is removed and
// the target is left as it was.
//
// A name that holds anything but a regular file (a symbolic link, a FIFO,
// a device such as /dev/null, a directory, a socket) is never replaced:
// renaming over it would put a regular file where the link, the pipe or
// the device was (as root, over /dev/full). The writers refuse it with an
// error ("not a regular file", naming the kind of file) and leave it
// alone; write to the link's target by its own name, or to standard
// output.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// errNotRegularFile is the error of a write to a name that exists and is
// not a regular file.
var errNotRegularFile = errors.New("not a regular file")

// filePerm is the mode of every file written.
const filePerm = 0o644

// WriteFile writes the bytes write produces to path atomically,
// replacing path if it is a regular file; a path that exists and is not one
// (a symbolic link, a FIFO, a device) is refused ("not a regular file")
// before anything is written. write gets a buffered writer; its error,
// or any error writing, syncing or renaming, is returned wrapped, naming
// path, and nothing is left behind.
func WriteFile(path string, write func(io.Writer) error) error {
	return osFiles.write(path, write, false)
}

// CreateFile is WriteFile for a name that must be new: if path
// exists, it fails with an error matching fs.ErrExist and path is left
// alone. The complete file appears under path in one step (a hard link
// of the synced temporary file; where the file system has no hard links,
// path is claimed empty with O_EXCL and the temporary file renamed over
// it, and removed again on failure).
func CreateFile(path string, write func(io.Writer) error) error {
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

// write is Write (create false) and Create (create true).
func (fsys fileSystem) write(path string, write func(io.Writer) error, create bool) (err error) {
	if err := checkReplaceable(path); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	tmp, err := fsys.createTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
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
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(filePerm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	closed = true
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if create {
		err = placeNew(tmp.Name(), path)
	} else {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	// Make the new name durable. Not every platform can sync a directory;
	// the file itself is already on disk.
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// checkReplaceable refuses a path that exists and is not a regular file.
// The name is not followed: a symbolic link is refused whatever it points
// to.
func checkReplaceable(path string) error {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode().IsRegular() {
		return nil // a new name, or one the writer may replace
	}
	return fmt.Errorf("write %s: %w (%s): refusing to replace it", path, errNotRegularFile, fileKind(fi.Mode()))
}

// fileKind names what a non-regular file is.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "mode " + m.String()
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

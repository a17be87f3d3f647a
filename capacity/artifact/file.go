package artifact

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// MaxBytes is the largest v1 JSON artifact Read accepts (100 MiB).
// The largest artifact the bounds allow (16,384 failed requests, every
// failure message at its cap: 97.4 MiB) fits below it; Report.WriteTo and
// Report.WriteFile refuse to write what Read would refuse to read.
const MaxBytes = 100 << 20

// Read reads one anvil-serving.benchmark/v1 capacity artifact of any
// generation. It keeps exactly the keys the document had, at every level, so
// Report.WriteFile writes a legacy artifact back unchanged; unknown keys survive as
// raw JSON. It fails on input over MaxBytes, invalid or truncated
// JSON, bare NaN/Infinity (with the byte offset), a top level that is not an
// object, a wrong or missing schema or a document that is not a capacity
// artifact (errors.Is ErrNotArtifact), values of the wrong type
// (naming the field) and negative request counts.
func Read(r io.Reader) (*Report, error) {
	data, err := readLimited(r)
	if err != nil {
		return nil, fmt.Errorf("artifact: read: %w", err)
	}
	if len(data) > MaxBytes {
		return nil, fmt.Errorf("artifact: read: input exceeds the %d-byte (%d MiB) limit", MaxBytes, MaxBytes>>20)
	}
	var rep Report
	if err := rep.UnmarshalJSON(data); err != nil {
		return nil, fmt.Errorf("artifact: read: %w", err)
	}
	return &rep, nil
}

// readLimited reads r to EOF or to one byte past MaxBytes, sizing
// its buffer up front when r knows its length (bytes.Reader, os.File).
func readLimited(r io.Reader) ([]byte, error) {
	size := int64(bytes.MinRead)
	switch v := r.(type) {
	case interface{ Len() int }:
		size = int64(v.Len())
	case interface{ Stat() (os.FileInfo, error) }:
		if info, err := v.Stat(); err == nil && info.Mode().IsRegular() {
			size = info.Size()
		}
	}
	size = min(size, MaxBytes+1) + bytes.MinRead // room to see EOF without regrowing
	var buf bytes.Buffer
	buf.Grow(int(size))
	_, err := buf.ReadFrom(io.LimitReader(r, MaxBytes+1))
	return buf.Bytes(), err
}

// errTooLarge is returned by limitWriter past MaxBytes.
var errTooLarge = fmt.Errorf("the artifact exceeds the %d-byte (%d MiB) reader limit", MaxBytes, MaxBytes>>20)

// limitWriter passes at most MaxBytes to w.
type limitWriter struct {
	w io.Writer
	n int64
}

var _ io.Writer = (*limitWriter)(nil)

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n+int64(len(p)) > MaxBytes {
		return 0, errTooLarge
	}
	n, err := l.w.Write(p)
	l.n += int64(n)
	return n, err
}

// WriteTo writes r to w as the artifact: keys sorted at every level,
// 2-space indent, no HTML escaping, trailing newline. It fails without
// writing past MaxBytes; w may then hold a partial document.
func (r *Report) WriteTo(w io.Writer) (int64, error) {
	if r == nil {
		return 0, errors.New("artifact: write: nil report")
	}
	n, err := r.writeTo(&limitWriter{w: w})
	if err != nil {
		return n, fmt.Errorf("artifact: write: %w", err)
	}
	return n, nil
}

// write is WriteTo without the count.
func write(w io.Writer, r *Report) error {
	_, err := r.WriteTo(w)
	return err
}

// WriteFile writes r to path atomically: the artifact goes to a temporary
// file in the same directory, is synced to disk, gets mode 0644 and is
// renamed over path, and the directory is synced. Readers see the old file
// or the complete new one, never a partial write; on error no temporary
// file is left behind. A path that exists and is not a regular file (a
// symbolic link, a FIFO, a device) is refused and left alone.
func (r *Report) WriteFile(path string) error {
	if r == nil {
		return errors.New("artifact: write: nil report")
	}
	return WriteFile(path, func(w io.Writer) error { return write(w, r) })
}

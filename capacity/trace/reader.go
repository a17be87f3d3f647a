package trace

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/anvilbench/anvil/capacity/internal/field"
	"hash"
	"io"
	"path/filepath"
	"time"
)

// A Reader reads the requests of a trace, one row at a time:
//
//	r := trace.NewReader(f, "conv.jsonl", trace.SpeedUp(10))
//	for r.Scan() {
//		rec := r.Record()
//		...
//	}
//	if err := r.Err(); err != nil {
//		...
//	}
//
// The first malformed row ends the scan with a *capacity.FieldError
// naming the file, the line and the field. Rows must be in time order
// (equal timestamps allowed); the trace's first timestamp is its first
// row's.
type Reader struct {
	name   string
	format Format
	opts   options

	src  io.Reader // the file, through the hash
	sum  *countingHash
	rows rowParser

	rec      Record
	err      error
	done     bool
	stop     bool // First rows were yielded: the next Scan ends
	started  bool
	origin   time.Duration
	prev     time.Duration
	prevLine int

	used, firstLine, lastLine int
}

// rowParser reads the rows of one format.
type rowParser interface {
	// next fills rec with the next row's fields and line, all but the
	// offsets, and returns the row's timestamp from an origin of the
	// parser's choosing; io.EOF after the last row.
	next(rec *Record) (time.Duration, error)
	// stampField is the name of the timestamp field, for messages.
	stampField() string
}

// NewReader returns a Reader of the trace read from r. name is the file's
// name, used in messages, in the Description and, without a Format
// option, to tell the format (see Format). Invalid options, or a format
// that is not given and not told by the name, are reported by Err after
// the first Scan.
func NewReader(r io.Reader, name string, opts ...Option) *Reader {
	sum := &countingHash{h: sha256.New()}
	rd := &Reader{name: name, sum: sum, src: io.TeeReader(r, sum)}
	o, err := resolve(opts)
	if err != nil {
		rd.fail(err)
		return rd
	}
	rd.opts, rd.format = o, o.format
	if rd.format == formatAuto {
		f, ok := formatOf(name)
		if !ok {
			rd.fail(&field.Error{Pkg: pkg, Kind: errInvalid, Where: at(name, 0), Field: "format", Value: "",
				Rule: "must be " + wantFormat + " (the file name does not tell)"})
			return rd
		}
		rd.format = f
	}
	switch rd.format {
	case formatMooncake:
		rd.rows = newMooncake(rd.src, name)
	case formatAzure:
		rd.rows = newAzure(rd.src, name)
	case formatJSONL:
		rd.rows = newNative(rd.src, name)
	}
	return rd
}

// Scan reads the next row inside the window and reports whether there is
// one. At the end of the trace, after the window's end or after First
// rows, it reads the rest of the file into the SHA-256 and returns false.
func (r *Reader) Scan() bool {
	if r.done {
		return false
	}
	if r.stop {
		r.finish()
		return false
	}
	for {
		var rec Record
		stamp, err := r.rows.next(&rec)
		if errors.Is(err, io.EOF) {
			r.finish()
			return false
		}
		if err != nil {
			r.fail(err)
			return false
		}
		if !r.started {
			r.origin, r.prev, r.started = stamp, 0, true
		}
		t := stamp - r.origin
		if t < r.prev {
			r.fail(&field.Error{Pkg: pkg, Kind: errInvalid, Where: at(r.name, rec.Line), Field: r.rows.stampField(),
				Value: t, Rule: "must be " + fmt.Sprintf("at or after the previous row's offset %v (line %d): rows are in time order", r.prev, r.prevLine)})
			return false
		}
		if t > maxOffset {
			r.fail(&field.Error{Pkg: pkg, Kind: errInvalid, Where: at(r.name, rec.Line), Field: r.rows.stampField(),
				Value: t, Rule: "must be " + fmt.Sprintf("at most %v after the first row's", maxOffset)})
			return false
		}
		r.prev, r.prevLine = t, rec.Line
		in, past := r.opts.window.contains(t)
		if past {
			r.finish()
			return false
		}
		if !in {
			continue
		}
		rec.TraceOffset = t
		rec.Offset = r.opts.replayOffset(t)
		r.rec = rec
		r.used++
		if r.firstLine == 0 {
			r.firstLine = rec.Line
		}
		r.lastLine = rec.Line
		if r.opts.first > 0 && r.used == r.opts.first {
			r.stop = true
		}
		return true
	}
}

// Record returns the row the last successful Scan read.
func (r *Reader) Record() Record { return r.rec }

// Err returns the error that ended the scan, or nil at the end of the
// trace.
func (r *Reader) Err() error { return r.err }

// Name returns the trace's name as given to NewReader.
func (r *Reader) Name() string { return r.name }

// Format returns the format the Reader reads (told from the name
// without a Format option); "" when it could not be told.
func (r *Reader) Format() Format { return r.format }

// errNotDone is Description's error before the scan ended.
var errNotDone = errors.New("trace: Description before the scan ended")

// Description describes the trace and the options, once Scan has
// returned false: the SHA-256 covers every byte of the file. Before
// that, or when the scan ended with an error, it returns the error.
func (r *Reader) Description() (Description, error) {
	if !r.done {
		return Description{}, errNotDone
	}
	if r.err != nil {
		return Description{}, r.err
	}
	return Description{
		File:        filepath.Base(r.name),
		Format:      r.format,
		SHA256:      hex.EncodeToString(r.sum.h.Sum(nil)),
		Bytes:       r.sum.n,
		Rows:        r.used,
		FirstLine:   r.firstLine,
		LastLine:    r.lastLine,
		SpeedUp:     r.opts.speedUp,
		WindowStart: r.opts.window.Start,
		WindowEnd:   r.opts.window.End,
		First:       r.opts.first,
	}, nil
}

// finish reads the rest of the file into the hash and ends the scan.
func (r *Reader) finish() {
	r.done = true
	if _, err := io.Copy(io.Discard, r.src); err != nil {
		r.err = &field.Error{Pkg: pkg, Kind: errInvalid, Where: at(r.name, 0), Field: "file", Err: err}
	}
}

func (r *Reader) fail(err error) {
	r.done, r.err = true, err
}

// countingHash is a hash that counts the bytes written to it.
type countingHash struct {
	h hash.Hash
	n int64
}

func (c *countingHash) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return c.h.Write(p)
}

// Package sse reads a Server-Sent Events stream (text/event-stream) into
// its events, the way go-sse's sse.Read does (the event-stream grammar of
// the WHATWG HTML standard, section 9.2.6, as that library implements it),
// without allocating once its buffers have grown to the stream's largest
// line and event.
//
// A Reader has a Scan loop:
//
//	r := sse.NewReader(body, maxEventSize)
//	for r.Scan() {
//		ev := r.Event()
//		// ev.Type, ev.Data
//	}
//	if err := r.Err(); err != nil { ... }
//
// The events a stream dispatches, their type and data, and the error that
// ends the reading are those sse.Read gives for the same bytes
// (FuzzReaderAgainstGoSSE checks it), whatever sizes the reads of the body
// come in.
//
// The rules: a line ends at "\n", "\r" or "\r\n"; a line "name:value" or
// "name" (no colon) is a field, one space after the colon is dropped, and a
// name longer than five bytes is ignored; "data" lines are joined with
// "\n", "event" sets the type, "id" (without a NUL byte) only marks the
// event, "retry" and other names are ignored, a line starting with ':' is a
// comment. A blank line dispatches the event when it has a data, event or
// id field. A UTF-8 byte-order mark at the start of the first non-blank line
// is dropped. At the end of the body a pending event is not dispatched
// (EventSource drops it too). An event (counting the blank lines before it)
// that has not ended within the reader's maximum event size fails the
// reading with bufio.ErrTooLong.
package sse

import (
	"bufio"
	"bytes"
	"io"
)

// Field names of the event-stream grammar.
const (
	fieldData  = "data"
	fieldEvent = "event"
	fieldID    = "id"
	// maxFieldName is the longest field name go-sse looks at; a line whose
	// colon comes later is ignored.
	maxFieldName = 5
	// bom is the UTF-8 byte-order mark.
	bom = "\xEF\xBB\xBF"
	// startBuffer is the initial read buffer (go-sse's bufio.Scanner
	// starts at the same 4,096 bytes).
	startBuffer = 4096
	// maxEmptyReads is how many reads returning nothing in a row end the
	// input with io.ErrNoProgress, as bufio.Scanner does.
	maxEmptyReads = 100
)

// An Event is one dispatched event. Its slices belong to the Reader and are
// valid until the next call of Scan.
type Event struct {
	// Type is the value of the event's last "event" field, empty when it
	// had none (the default type "message").
	Type []byte
	// Data is the event's "data" lines joined with "\n".
	Data []byte
}

// A Reader reads the events of one stream. It is not safe for concurrent
// use.
type Reader struct {
	r        io.Reader
	maxEvent int

	buf     []byte // buffered input; buf[off:] is not consumed yet
	off     int
	readErr error // the read error that ends the input, once seen
	err     error // the error Err reports, once the reading ended
	done    bool
	empties int  // consecutive empty reads
	skipLF  bool // the last line ended with '\r': a '\n' next belongs to it
	// lfDispatched: skipLF's line was the blank line of an event already
	// dispatched, so its '\n' (not read yet) is none of the next event's
	// bytes, as it is none when it comes in the same read.
	lfDispatched bool
	started      bool // a non-blank line was seen (the BOM check is done)
	eventBytes   int  // bytes of the current event consumed so far
	blankOnly    bool // the current event has only had blank lines

	data  []byte // the joined data lines of the current event, each + '\n'
	typ   []byte // the event type of the current event
	dirty bool   // the current event has a data, event or id field
	ev    Event  // the event Scan found
}

// NewReader returns a Reader of the stream r whose events may be at most
// maxEventSize bytes of the wire form (field names, values and line ends,
// the blank lines before the event included); a larger one ends the reading
// with bufio.ErrTooLong. maxEventSize must be positive.
func NewReader(r io.Reader, maxEventSize int) *Reader {
	return &Reader{r: r, maxEvent: maxEventSize, blankOnly: true}
}

// Scan advances to the next event, which Event then returns. It returns
// false at the end of the input (also when the body ended inside an event
// or inside a line, which go-sse's sse.Read treats as the end of input), on
// a read error and on an event too large; Err then says which.
func (e *Reader) Scan() bool {
	if e.done {
		return false
	}
	ev, err := e.next()
	if err != nil {
		e.done, e.ev = true, Event{}
		if err != io.EOF { //nolint:errorlint // next returns io.EOF unwrapped
			e.err = err
		}
		return false
	}
	e.ev = ev
	return true
}

// Event returns the event the last successful Scan found. Its slices are
// valid until the next call of Scan.
func (e *Reader) Event() Event { return e.ev }

// Err returns the error that ended the reading: nil at the end of the
// input, bufio.ErrTooLong for an event over the size limit,
// io.ErrNoProgress for a body whose reads returned nothing 100 times in a
// row, else the body's read error as it was returned.
func (e *Reader) Err() error { return e.err }

// next returns the next event, or io.EOF at the end of the input.
func (e *Reader) next() (Event, error) {
	for {
		rest := e.buf[e.off:]
		if e.skipLF && len(rest) > 0 {
			e.skipLF = false
			if rest[0] == '\n' {
				e.off++
				if !e.lfDispatched {
					e.eventBytes++
				}
				e.lfDispatched = false
				continue
			}
			e.lfDispatched = false
		}
		i := bytes.IndexByte(rest, '\n')
		line := rest
		if i >= 0 {
			line = rest[:i]
		}
		if j := bytes.IndexByte(line, '\r'); j >= 0 {
			i, line = j, rest[:j]
		}
		if i < 0 {
			// No complete line buffered: read more, unless the event is
			// already too large.
			if e.eventBytes+len(rest) >= e.maxEvent {
				return Event{}, bufio.ErrTooLong
			}
			if e.readErr != nil {
				return Event{}, e.readErr
			}
			e.fill()
			continue
		}
		e.off += i + 1
		e.eventBytes += i + 1
		if rest[i] == '\r' {
			e.skipLF = true
		}
		if e.eventBytes > e.maxEvent {
			return Event{}, bufio.ErrTooLong
		}
		if len(line) == 0 {
			if e.blankOnly {
				continue // a blank line before the event: part of it, no end
			}
			e.blankOnly, e.eventBytes = true, 0
			if e.skipLF && e.off < len(e.buf) && e.buf[e.off] == '\n' {
				e.skipLF = false
				e.off++
			}
			e.lfDispatched = e.skipLF
			if !e.dirty {
				continue // only comments or ignored fields
			}
			ev := Event{Type: e.typ, Data: e.data}
			if len(ev.Data) > 0 {
				ev.Data = ev.Data[:len(ev.Data)-1]
			}
			e.data, e.typ, e.dirty = e.data[:0], e.typ[:0], false
			return ev, nil
		}
		e.blankOnly = false
		if !e.started {
			e.started = true
			line = bytes.TrimPrefix(line, []byte(bom))
		}
		e.field(line)
	}
}

// field applies one non-blank line to the current event.
func (e *Reader) field(line []byte) {
	colon := bytes.IndexByte(line, ':')
	if colon > maxFieldName {
		return
	}
	name, value := line, []byte(nil)
	if colon >= 0 {
		name, value = line[:colon], line[colon+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case fieldData:
		e.data = append(append(e.data, value...), '\n')
		e.dirty = true
	case fieldEvent:
		e.typ = append(e.typ[:0], value...)
		e.dirty = true
	case fieldID:
		if bytes.IndexByte(value, 0) < 0 {
			e.dirty = true
		}
	}
}

// fill reads more input into the buffer, moving the unconsumed bytes to
// its start and growing it (up to maxEvent) when they fill it.
func (e *Reader) fill() {
	if e.off > 0 {
		n := copy(e.buf, e.buf[e.off:])
		e.buf, e.off = e.buf[:n], 0
	}
	if len(e.buf) == cap(e.buf) {
		size := max(2*cap(e.buf), min(startBuffer, e.maxEvent))
		grown := make([]byte, len(e.buf), min(size, max(e.maxEvent, len(e.buf)+1)))
		copy(grown, e.buf)
		e.buf = grown
	}
	n, err := e.r.Read(e.buf[len(e.buf):cap(e.buf)])
	e.buf = e.buf[:len(e.buf)+n]
	switch {
	case err != nil:
		e.readErr = err
	case n == 0:
		if e.empties++; e.empties >= maxEmptyReads {
			e.readErr = io.ErrNoProgress
		}
	default:
		e.empties = 0
	}
}

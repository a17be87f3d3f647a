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
	startBuffer = 1024
	// maxReadBuffer is the largest the read buffer grows to for reading
	// alone: a read that fills all the room it was given doubles the
	// buffer for the next, up to this (a bufio.Scanner's largest token),
	// so that a fast stream is read in few, large reads while a slow one
	// keeps its small buffer. A line longer than the buffer grows it
	// further, up to the maximum event size.
	maxReadBuffer = 64 << 10
	// trailingHead is how many bytes of the trailing field lines Trailing
	// keeps.
	trailingHead = 32
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
	// single is the value of the current event's one data line while it
	// is still in buf, not copied into data (aliased true): most events
	// have one data line, which is then never copied. A second data line,
	// or a fill that would move buf, copies it into data.
	single  []byte
	aliased bool
	noCR    bool // buf[off:] holds no '\r': a line ends at '\n' alone
	grow    bool // the last read filled all its room: the next fill doubles buf

	// The field lines received since the last blank line, as Trailing
	// reports them: their bytes, and the first trailingHead of them.
	pending int64
	head    [trailingHead]byte
}

// NewReader returns a Reader of the stream r whose events may be at most
// maxEventSize bytes of the wire form (field names, values and line ends,
// the blank lines before the event included); a larger one ends the reading
// with bufio.ErrTooLong. maxEventSize must be positive.
func NewReader(r io.Reader, maxEventSize int) *Reader {
	return &Reader{r: r, maxEvent: maxEventSize, blankOnly: true}
}

// Reset makes e read the stream r from its start, as a new Reader of the
// same maximum event size would, keeping the buffers it has grown: a worker
// that reads one stream after another allocates them once.
func (e *Reader) Reset(r io.Reader) {
	// Zeroed in place, then set: a composite literal of the Reader would
	// be built in a temporary on the caller's stack first (the Reader
	// reads itself), which stays in the frame of a caller that reads a
	// stream.
	maxEvent, buf, data, typ := e.maxEvent, e.buf[:0], e.data[:0], e.typ[:0]
	*e = Reader{}
	e.r, e.maxEvent, e.blankOnly, e.buf, e.data, e.typ = r, maxEvent, true, buf, data, typ
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

// dataPrefix starts the one line of the common event, "data: " + its
// data + "\n\n" (dataEvent).
const dataPrefix = "data: "

// dataEvent returns the common event, one "data: " line and a blank line
// ending in "\n", when the buffer holds it whole at the start of an event
// (nothing of one read yet, no '\r' in the buffer, the byte-order mark
// check done), and reports whether it did. What it returns, and the
// state it leaves, are those of reading the two lines one at a time.
func (e *Reader) dataEvent() (Event, bool) {
	if !e.noCR || !e.blankOnly || e.dirty || e.skipLF || !e.started {
		return Event{}, false
	}
	rest := e.buf[e.off:]
	if len(rest) < len(dataPrefix)+2 || string(rest[:len(dataPrefix)]) != dataPrefix {
		return Event{}, false
	}
	i := bytes.IndexByte(rest, '\n')
	if i < 0 || i+1 >= len(rest) || rest[i+1] != '\n' || e.eventBytes+i+2 > e.maxEvent {
		return Event{}, false
	}
	e.off += i + 2
	e.eventBytes, e.pending = 0, 0
	return Event{Type: e.typ[:0], Data: rest[len(dataPrefix):i:i]}, true
}

// Pending returns, when the reader stands at the start of an event whose
// bytes would be read as those of the common event (one "data: " line and
// a blank line, see dataEvent) if they are buffered whole, the buffered
// bytes not yet consumed; else nil. A caller that recognizes such an
// event at their start, in the same pass that decodes its data, consumes
// it with SkipDataEvent instead of Scan. The slice is valid until the
// next call of Scan or SkipDataEvent.
func (e *Reader) Pending() []byte {
	if e.done || !e.noCR || !e.blankOnly || e.dirty || e.skipLF || !e.started {
		return nil
	}
	return e.buf[e.off:]
}

// SkipDataEvent consumes the first n bytes of what Pending returned,
// which the caller found to be one common event: "data: ", its data,
// which holds no line end, and "\n\n". The reader is left as Scan leaves
// it after returning that event (Event then returns no event). It
// reports false, consuming nothing, when the n bytes do not begin with
// "data: " and end with "\n\n", or are more than the maximum event size:
// Scan then reads them.
func (e *Reader) SkipDataEvent(n int) bool {
	rest := e.buf[e.off:]
	if n < len(dataPrefix)+2 || n > len(rest) || e.eventBytes+n > e.maxEvent ||
		string(rest[:len(dataPrefix)]) != dataPrefix || rest[n-2] != '\n' || rest[n-1] != '\n' {
		return false
	}
	e.off += n
	e.eventBytes, e.pending = 0, 0
	e.ev = Event{}
	return true
}

// next returns the next event, or io.EOF at the end of the input.
func (e *Reader) next() (Event, error) {
	if ev, ok := e.dataEvent(); ok {
		return ev, nil
	}
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
		if !e.noCR {
			if j := bytes.IndexByte(line, '\r'); j >= 0 {
				i, line = j, rest[:j]
			}
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
			e.pending = 0
		} else if line[0] != ':' {
			e.keep(line)
			e.keep(rest[i : i+1])
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
			if e.aliased {
				ev.Data = e.single
			} else if len(ev.Data) > 0 {
				ev.Data = ev.Data[:len(ev.Data)-1]
			}
			e.data, e.typ, e.dirty = e.data[:0], e.typ[:0], false
			e.single, e.aliased = nil, false
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
		switch {
		case !e.dirty || (len(e.data) == 0 && !e.aliased):
			// The event's first data line: kept where it is.
			e.single, e.aliased = value, true
		default:
			e.unalias()
			e.data = append(append(e.data, value...), '\n')
		}
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

// unalias copies the current event's one data line into data, when it is
// still only in buf.
func (e *Reader) unalias() {
	if e.aliased {
		e.data = append(append(e.data, e.single...), '\n')
		e.single, e.aliased = nil, false
	}
}

// keep counts the bytes of a field line (or its line end) received since
// the last blank line, and remembers those among the first trailingHead.
func (e *Reader) keep(b []byte) {
	if e.pending < trailingHead {
		copy(e.head[e.pending:], b)
	}
	e.pending += int64(len(b))
}

// Trailing returns, once Scan has returned false at the end of the input,
// the bytes of the field lines received after the last blank line (their
// line ends and an unfinished last line included; comment lines, which
// start with ':', not counted) and the first 32 of them: non-zero at the
// end of the input means the stream's last event was cut, which Scan
// drops silently, as EventSource does.
func (e *Reader) Trailing() (n int64, head []byte) {
	n = e.pending
	if rest := e.buf[e.off:]; len(rest) > 0 && rest[0] != ':' {
		n += int64(len(rest))
		if e.pending < trailingHead {
			c := copy(e.head[e.pending:], rest)
			return n, e.head[:e.pending+int64(c)]
		}
	}
	return n, e.head[:min(n, trailingHead)]
}

// fill reads more input into the buffer, moving the unconsumed bytes to
// its start and growing it: up to maxEvent when they fill it, and up to
// maxReadBuffer when the last read filled all the room it was given.
func (e *Reader) fill() {
	e.unalias() // buf is about to move
	if e.off > 0 {
		n := copy(e.buf, e.buf[e.off:])
		e.buf, e.off = e.buf[:n], 0
	}
	switch {
	case len(e.buf) == cap(e.buf):
		size := max(2*cap(e.buf), min(startBuffer, e.maxEvent))
		e.resize(min(size, max(e.maxEvent, len(e.buf)+1)))
	case e.grow && cap(e.buf) < maxReadBuffer:
		e.resize(min(2*cap(e.buf), maxReadBuffer))
	}
	old := len(e.buf)
	room := e.buf[old:cap(e.buf)]
	n, err := e.r.Read(room)
	e.buf = e.buf[:old+n]
	e.grow = n == len(room)
	if n > 0 {
		if !e.noCR {
			e.noCR = bytes.IndexByte(e.buf, '\r') < 0
		} else {
			e.noCR = bytes.IndexByte(e.buf[old:], '\r') < 0
		}
	}
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

// resize moves the buffer into a new array of capacity size.
func (e *Reader) resize(size int) {
	grown := make([]byte, len(e.buf), size)
	copy(grown, e.buf)
	e.buf = grown
}

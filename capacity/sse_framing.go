package capacity

import (
	"bufio"
	"bytes"
	"io"
)

// eventReader splits a response body into server-sent events the way
// go-sse's sse.Read does (the event-stream grammar of the WHATWG HTML
// standard, section 9.2.6, as that library implements it), without
// allocating once its buffers have grown to the stream's largest line and
// event: the events a stream dispatches, their type and data, and the error
// that ends the reading are those sse.Read gives for the same bytes
// (FuzzEventReaderAgainstGoSSE checks it).
//
// The rules: a line ends at "\n", "\r" or "\r\n"; a line "name:value" or
// "name" (no colon) is a field, one space after the colon is dropped, and a
// name longer than five bytes is ignored; "data" lines are joined with
// "\n", "event" sets the type, "id" (without a NUL byte) only marks the
// event, "retry" and other names are ignored, a line starting with ':' is a
// comment. A blank line dispatches the event when it has a data, event or
// id field. A UTF-8 byte-order mark at the start of the first non-blank line
// is dropped. At the end of the body a pending event is not dispatched. An
// event (counting the blank lines before it) that has not ended within
// maxEvent bytes fails the reading with bufio.ErrTooLong.
type eventReader struct {
	r        io.Reader
	maxEvent int

	buf     []byte // buffered input; buf[off:] is not consumed yet
	off     int
	err     error // the read error that ends the input, once seen
	empties int   // consecutive empty reads
	skipLF  bool  // the last line ended with '\r': a '\n' next belongs to it
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
}

// sseEvent is one dispatched event. Its slices are valid until the next
// call of eventReader.next.
type sseEvent struct {
	Type []byte
	Data []byte
}

// Field names of the event-stream grammar.
const (
	sseFieldData  = "data"
	sseFieldEvent = "event"
	sseFieldID    = "id"
	// sseMaxFieldName is the longest field name go-sse looks at; a line
	// whose colon comes later is ignored.
	sseMaxFieldName = 5
	// sseBOM is the UTF-8 byte-order mark.
	sseBOM = "\xEF\xBB\xBF"
	// sseStartBuffer is the initial read buffer (go-sse's bufio.Scanner
	// starts at the same 4,096 bytes).
	sseStartBuffer = 4096
	// sseMaxEmptyReads is how many reads returning nothing in a row end the
	// input with io.ErrNoProgress, as bufio.Scanner does.
	sseMaxEmptyReads = 100
)

func newEventReader(r io.Reader, maxEvent int) *eventReader {
	return &eventReader{r: r, maxEvent: maxEvent, blankOnly: true}
}

// next returns the next event. At the end of the input it returns io.EOF
// (also when the body ended inside an event, or inside a line, which
// go-sse's sse.Read treats as the end of input); a read error is returned
// as is, and an event too large is bufio.ErrTooLong.
func (e *eventReader) next() (sseEvent, error) {
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
				return sseEvent{}, bufio.ErrTooLong
			}
			if e.err != nil {
				return sseEvent{}, e.endErr()
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
			return sseEvent{}, bufio.ErrTooLong
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
			ev := sseEvent{Type: e.typ, Data: e.data}
			if len(ev.Data) > 0 {
				ev.Data = ev.Data[:len(ev.Data)-1]
			}
			e.data, e.typ, e.dirty = e.data[:0], e.typ[:0], false
			return ev, nil
		}
		e.blankOnly = false
		if !e.started {
			e.started = true
			line = bytes.TrimPrefix(line, []byte(sseBOM))
		}
		e.field(line)
	}
}

// field applies one non-blank line to the current event.
func (e *eventReader) field(line []byte) {
	colon := bytes.IndexByte(line, ':')
	if colon > sseMaxFieldName {
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
	case sseFieldData:
		e.data = append(append(e.data, value...), '\n')
		e.dirty = true
	case sseFieldEvent:
		e.typ = append(e.typ[:0], value...)
		e.dirty = true
	case sseFieldID:
		if bytes.IndexByte(value, 0) < 0 {
			e.dirty = true
		}
	}
}

// fill reads more input into the buffer, moving the unconsumed bytes to
// its start and growing it (up to maxEvent) when they fill it.
func (e *eventReader) fill() {
	if e.off > 0 {
		n := copy(e.buf, e.buf[e.off:])
		e.buf, e.off = e.buf[:n], 0
	}
	if len(e.buf) == cap(e.buf) {
		size := max(2*cap(e.buf), min(sseStartBuffer, e.maxEvent))
		grown := make([]byte, len(e.buf), min(size, max(e.maxEvent, len(e.buf)+1)))
		copy(grown, e.buf)
		e.buf = grown
	}
	n, err := e.r.Read(e.buf[len(e.buf):cap(e.buf)])
	e.buf = e.buf[:len(e.buf)+n]
	switch {
	case err != nil:
		e.err = err
	case n == 0:
		if e.empties++; e.empties >= sseMaxEmptyReads {
			e.err = io.ErrNoProgress
		}
	default:
		e.empties = 0
	}
}

// endErr is the error next returns once the input is exhausted: io.EOF for
// the end of the body (also an unexpected EOF of go-sse's kind, a line cut
// by the end), the read error otherwise.
func (e *eventReader) endErr() error {
	if e.err == io.EOF { //nolint:errorlint // io.EOF is returned unwrapped by the io.Reader contract
		return io.EOF
	}
	return e.err
}

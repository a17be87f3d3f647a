package anviltest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// maxSSELine bounds one line of an event stream the conformance checks
// read; a chat-completion chunk is a few hundred bytes.
const maxSSELine = 1 << 20

// maxSSEEvents bounds the events of one response the checks read: every
// request of the suite asks for at most 1024 tokens.
const maxSSEEvents = 8192

// sseEvent is one dispatched Server-Sent Event.
type sseEvent struct {
	// Name is the "event:" field (empty: the default "message").
	Name string
	// Data is the "data:" lines joined with "\n".
	Data string
}

// sseReader reads the events of a text/event-stream body the way the
// WHATWG EventSource parser does: lines end with LF, CRLF or CR; a blank
// line dispatches the event being built (if it has data); a line starting
// with ":" is a comment; "field:value" drops one leading space of the value;
// "data" lines accumulate with "\n"; other fields (id, retry, unknown ones)
// are counted and otherwise ignored.
type sseReader struct {
	r        *bufio.Reader
	comments int // comment lines
	fields   int // lines with a field other than data and event
	events   int // events returned
	pendCR   bool
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// errSSELimit is wrapped when a stream exceeds maxSSELine or maxSSEEvents.
var errSSELimit = errors.New("event stream over the conformance reader's bounds")

// line returns the next line without its terminator; io.EOF after the last.
func (s *sseReader) line() ([]byte, error) {
	var buf []byte
	for {
		b, err := s.r.ReadByte()
		if err != nil {
			if errors.Is(err, io.EOF) && len(buf) > 0 {
				return buf, nil
			}
			return nil, err
		}
		if s.pendCR {
			s.pendCR = false
			if b == '\n' {
				continue
			}
		}
		switch b {
		case '\n':
			return buf, nil
		case '\r':
			s.pendCR = true
			return buf, nil
		}
		if len(buf) >= maxSSELine {
			return nil, fmt.Errorf("%w: a line longer than %d bytes", errSSELimit, maxSSELine)
		}
		buf = append(buf, b)
	}
}

// next returns the next event; io.EOF at the end of the stream (an event
// not terminated by a blank line is dispatched at the end, as clients that
// read to EOF do).
func (s *sseReader) next() (sseEvent, error) {
	var ev sseEvent
	var data bytes.Buffer
	hasData := false
	for {
		line, err := s.line()
		if err != nil {
			if errors.Is(err, io.EOF) && hasData {
				return s.dispatch(ev, &data)
			}
			return sseEvent{}, err
		}
		if len(line) == 0 {
			if hasData {
				return s.dispatch(ev, &data)
			}
			ev = sseEvent{}
			continue
		}
		if line[0] == ':' {
			s.comments++
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.Write(value)
			hasData = true
			if data.Len() > maxSSELine {
				return sseEvent{}, fmt.Errorf("%w: an event larger than %d bytes", errSSELimit, maxSSELine)
			}
		case "event":
			ev.Name = string(value)
		default:
			s.fields++
		}
	}
}

func (s *sseReader) dispatch(ev sseEvent, data *bytes.Buffer) (sseEvent, error) {
	s.events++
	if s.events > maxSSEEvents {
		return sseEvent{}, fmt.Errorf("%w: more than %d events", errSSELimit, maxSSEEvents)
	}
	ev.Data = data.String()
	return ev, nil
}

package client

import (
	"bytes"
	"fmt"
	"io"
	"time"
)

// bodyEnd says how the reading of a response body stopped.
type bodyEnd uint8

const (
	// bodyOpen: the reader stopped before the body ended (terminal event,
	// validation failure, byte limit).
	bodyOpen bodyEnd = iota
	// bodyEOF: the body ended cleanly (io.EOF from the transport).
	bodyEOF
	// bodyError: a read failed: an unexpected EOF (the connection dropped
	// inside a chunked or sized body), a reset, a timeout or a cancellation.
	bodyError
)

var _ fmt.Stringer = bodyEnd(0)

// String names the end for messages and tests.
func (e bodyEnd) String() string {
	switch e {
	case bodyEOF:
		return "eof"
	case bodyError:
		return "error"
	default:
		return "open"
	}
}

// trackedBody wraps a response body. It stamps every read that returns bytes
// with the monotonic clock, reports the activity (the stall timer), records
// how the body ended, and follows the SSE framing byte by byte so that the
// bytes after the last complete event (an event cut by the end of the body,
// which go-sse drops silently) are counted.
//
// The framing follows the event-stream grammar: a line ends at "\n", "\r" or
// "\r\n"; an empty line completes an event; a line starting with ':' is a
// comment and carries no field. Bytes of field lines seen since the last
// empty line are pending: at a clean EOF they are an incomplete final event.
type trackedBody struct {
	r        io.Reader
	activity func(time.Time) // called with the stamp of every read that returned bytes; may be nil

	lastRead time.Time // monotonic stamp of the last read that returned bytes
	bytes    int64     // bytes read in total
	end      bodyEnd
	endAt    time.Time // when the end (EOF or error) was observed
	err      error     // the read error when end == bodyError

	lineStart bool // the next byte starts a line
	comment   bool // the current line is a comment
	prevCR    bool // the previous byte was '\r' (a following '\n' is the same line end)
	pending   int64
	// head keeps the first bytes of the pending field lines, enough to
	// recognize a final data line (the terminal event's) that lacks its
	// blank line.
	head [pendingHeadSize]byte
}

// pendingHeadSize is the number of pending bytes kept for inspection.
const pendingHeadSize = 32

func newTrackedBody(r io.Reader, activity func(time.Time)) *trackedBody {
	return &trackedBody{r: r, activity: activity, lineStart: true}
}

var _ io.Reader = (*trackedBody)(nil)

// Read reads from the wrapped body and records what happened.
func (b *trackedBody) Read(p []byte) (int, error) {
	if b.end != bodyOpen {
		if b.end == bodyEOF {
			return 0, io.EOF
		}
		return 0, b.err
	}
	n, err := b.r.Read(p)
	if n > 0 {
		b.lastRead = time.Now()
		b.bytes += int64(n)
		b.scan(p[:n])
		if b.activity != nil {
			b.activity(b.lastRead)
		}
	}
	if err != nil {
		b.endAt = time.Now()
		if err == io.EOF { //nolint:errorlint // io.EOF is returned unwrapped by the io.Reader contract
			b.end = bodyEOF
		} else {
			b.end, b.err = bodyError, err
		}
	}
	return n, err
}

// scan advances the SSE framing state over p. It works a line segment at a
// time: the line ends are found with bytes.IndexByte (vectorized), and a
// read without '\r' (every read of a server ending lines with "\n") looks
// for '\n' alone; the state changes only at line starts and ends.
func (b *trackedBody) scan(p []byte) {
	hasCR := bytes.IndexByte(p, '\r') >= 0
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if hasCR {
			if j := bytes.IndexByte(p, '\r'); j >= 0 && (i < 0 || j < i) {
				i = j
			}
		}
		seg := p
		if i >= 0 {
			seg = p[:i]
		}
		if len(seg) > 0 {
			b.prevCR = false
			if b.lineStart {
				b.lineStart = false
				b.comment = seg[0] == ':'
			}
			if !b.comment {
				b.keep(seg)
			}
		}
		if i < 0 {
			return
		}
		c := p[i]
		p = p[i+1:]
		if c == '\n' && b.prevCR {
			// Second half of a "\r\n" line end: already counted.
			b.prevCR = false
			continue
		}
		if b.lineStart {
			b.pending = 0 // empty line: the event, if any, is complete
		} else if !b.comment {
			b.keepByte(c) // the line end belongs to a pending field line
		}
		b.lineStart, b.comment = true, false
		b.prevCR = c == '\r'
	}
}

// keep counts pending bytes and remembers those among the first
// pendingHeadSize.
func (b *trackedBody) keep(seg []byte) {
	if b.pending < pendingHeadSize {
		copy(b.head[b.pending:], seg)
	}
	b.pending += int64(len(seg))
}

// keepByte is keep of one byte.
func (b *trackedBody) keepByte(c byte) {
	if b.pending < pendingHeadSize {
		b.head[b.pending] = c
	}
	b.pending++
}

// trailing returns the number of field bytes received after the last
// complete event: non-zero at a clean EOF means the final event was cut.
func (b *trackedBody) trailing() int64 { return b.pending }

// trailingData returns the data of the bytes after the last complete
// event when they are one field line "data:...", which may lack its line
// end and the blank line that completes an event: whether that lone data
// is the terminal event, which then lost nothing, is the dialect's to say.
func (b *trackedBody) trailingData() ([]byte, bool) {
	if b.pending == 0 || b.pending > pendingHeadSize {
		return nil, false
	}
	line := bytes.TrimRight(b.head[:b.pending], "\r\n")
	data, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok || bytes.ContainsAny(data, "\r\n") {
		return nil, false
	}
	return bytes.TrimPrefix(data, []byte(" ")), true
}

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

// trackedBody wraps a response body. It stamps every read that returns bytes,
// reports the activity (the stall timer), and records how the body ended.
// A read's stamp is the moment its bytes reached the process: when the
// connection is one of the run's own (conn set, connection_rule.go), the
// end of the connection's last read, which may have come before this read
// of the body (the transport reads the response's headers and the first
// bytes of its body together, in its own goroutine, and hands them over);
// otherwise the end of this read.
type trackedBody struct {
	r        io.Reader
	activity func(time.Time) // called with the stamp of every read that returned bytes; may be nil
	conn     *watchedConn    // the connection the body is read from; nil when not one of the run's own

	lastRead time.Time // monotonic stamp of the last read that returned bytes
	bytes    int64     // bytes read in total
	end      bodyEnd
	endAt    time.Time // when the end (EOF or error) was observed
	err      error     // the read error when end == bodyError
}

func newTrackedBody(r io.Reader, activity func(time.Time)) *trackedBody {
	return &trackedBody{r: r, activity: activity}
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
		if b.conn != nil {
			b.lastRead = b.conn.lastRead()
		} else {
			b.lastRead = time.Now()
		}
		b.bytes += int64(n)
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

// trailingData returns the data of the bytes after the last complete
// event, n of them beginning with head (sse.Reader.Trailing), when they
// are one field line "data:...", which may lack its line end and the
// blank line that completes an event: whether that lone data is the
// terminal event, which then lost nothing, is the dialect's to say.
func trailingData(n int64, head []byte) ([]byte, bool) {
	if n == 0 || n > int64(len(head)) {
		return nil, false
	}
	line := bytes.TrimRight(head, "\r\n")
	data, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok || bytes.ContainsAny(data, "\r\n") {
		return nil, false
	}
	return bytes.TrimPrefix(data, []byte(" ")), true
}

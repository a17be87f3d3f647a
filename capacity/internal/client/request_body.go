package client

import (
	"bytes"
	"errors"
	"io"
	"sync/atomic"

	"github.com/anvilbench/anvil/capacity/internal/jsonstr"
)

// A Body is what Client.Send sends: a request body of known size that can
// be read from its start any number of times (the first attempt, a
// request sent again under the connection rule, the transport's GetBody).
type Body interface {
	ContentLength() int64
	NewReader() io.ReadCloser
}

// An Encoder writes the bodies of a run's prompts in a dialect. Everything
// but the prompt is the same for every request of a run, so it is encoded
// once: a request body is Head + the JSON-quoted prompt + Tail, with no
// reflection per request.
type Encoder struct {
	head, tail []byte
}

// NewEncoder encodes r's fixed part once in the dialect d (nil:
// ChatCompletions), for the bodies of any number of prompts; r.Messages
// must be nil (a conversation is encoded whole by d.Encode). The error is
// that of a value that does not encode as JSON.
func NewEncoder(d Dialect, r *Request) (*Encoder, error) {
	if d == nil {
		d = ChatCompletions
	}
	if r.Messages != nil {
		return nil, errors.New("capacity: an Encoder writes prompts, not conversations (Request.Messages)")
	}
	head, tail, err := d.Encode(r)
	if err != nil {
		return nil, err
	}
	return &Encoder{head: head, tail: tail}, nil
}

// Head is the body before the JSON-quoted prompt; Tail follows it.
func (e *Encoder) Head() []byte { return e.head }

// Tail is the body after the JSON-quoted prompt.
func (e *Encoder) Tail() []byte { return e.tail }

// AppendBody appends the request body for prompt to dst.
func (e *Encoder) AppendBody(dst, prompt []byte) []byte {
	dst = append(dst, e.head...)
	dst = jsonstr.Append(dst, prompt, jsonstr.Go)
	return append(dst, e.tail...)
}

// A Buffer is reusable request-body storage, a Body. The transport may
// still read a request body after RoundTrip returns (and may ask for it
// again through GetBody), so the bytes are reused only once every reader
// handed out has been closed; otherwise the buffer allocates afresh.
type Buffer struct {
	buf  []byte
	open *atomic.Int32 // readers handed out and not yet closed
}

// Reset returns storage for the next body, empty; Set makes what was
// appended to it the body.
func (b *Buffer) Reset() []byte {
	if b.open != nil && b.open.Load() != 0 {
		// A transport still holds a reader: leave that array to it.
		b.buf, b.open = nil, nil
	}
	if b.open == nil {
		b.open = new(atomic.Int32)
	}
	return b.buf[:0]
}

// Set makes body, the storage Reset returned with the body appended, the
// buffer's body.
func (b *Buffer) Set(body []byte) {
	if b.open == nil {
		b.open = new(atomic.Int32)
	}
	b.buf = body
}

// Bytes is the body.
func (b *Buffer) Bytes() []byte { return b.buf }

// ContentLength implements Body.
func (b *Buffer) ContentLength() int64 { return int64(len(b.buf)) }

// NewReader implements Body: a reader over the body whose Close is
// counted.
func (b *Buffer) NewReader() io.ReadCloser {
	b.open.Add(1)
	return &countedReader{Reader: bytes.NewReader(b.buf), open: b.open}
}

var _ Body = (*Buffer)(nil)

type countedReader struct {
	*bytes.Reader
	open   *atomic.Int32
	closed atomic.Bool
}

var _ io.ReadCloser = (*countedReader)(nil)

// Close implements io.Closer; only the first call counts.
func (r *countedReader) Close() error {
	if r.closed.CompareAndSwap(false, true) {
		r.open.Add(-1)
	}
	return nil
}

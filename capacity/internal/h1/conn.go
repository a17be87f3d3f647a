package h1

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"strings"
	"sync"
	"time"
)

// conn is one connection of a Transport. Only the goroutine of the
// request it carries reads and writes it; mu guards what a context's
// AfterFunc and a body's Close, from other goroutines, change.
type conn struct {
	t   *Transport
	key string
	nc  net.Conn
	br  *bufio.Reader // reads through the conn itself (Read below)

	nwrite    int64 // bytes written, over the connection's life
	werr      error // the error of the last write that failed
	readLimit int64 // bytes the response head may still take
	sawEOF    bool  // a read returned io.EOF
	reused    bool  // an answer on it was read whole before
	idleAt    time.Time

	mu       sync.Mutex
	canceled error // the cause of the context that closed it
	closed   bool
}

// Read reads the connection for br, within the head's limit.
func (c *conn) Read(p []byte) (int, error) {
	if c.readLimit <= 0 {
		return 0, fmt.Errorf("h1: the response head exceeds %d bytes", c.t.maxHeaderBytes())
	}
	if int64(len(p)) > c.readLimit {
		p = p[:c.readLimit]
	}
	n, err := c.nc.Read(p)
	if err == io.EOF { //nolint:errorlint // a connection's end is io.EOF itself
		c.sawEOF = true
	}
	c.readLimit -= int64(n)
	return n, err
}

// Write writes to the connection, counting the bytes written and keeping
// its error.
func (c *conn) Write(p []byte) (int, error) {
	n, err := c.nc.Write(p)
	c.nwrite += int64(n)
	if err != nil {
		c.werr = err
	}
	return n, err
}

// ReadFrom hands a body past the write buffer to the connection, as
// net/http's connection writer does (the body's WriteTo, or a copy).
func (c *conn) ReadFrom(r io.Reader) (int64, error) { return io.Copy(connWriter{c}, r) }

// connWriter is a conn as a plain io.Writer.
type connWriter struct{ c *conn }

func (w connWriter) Write(p []byte) (int, error) { return w.c.Write(p) }

// cancel closes the connection because the request's context is done.
func (c *conn) cancel(cause error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.canceled == nil {
		c.canceled = cause
	}
	c.closeLocked()
}

// canceledErr is the cause of the context that closed the connection,
// nil when none did.
func (c *conn) canceledErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.canceled
}

func (c *conn) close() {
	c.mu.Lock()
	c.closeLocked()
	c.mu.Unlock()
}

func (c *conn) closeLocked() {
	if !c.closed {
		c.closed = true
		_ = c.nc.Close()
	}
}

// maxHeaderBytes is the limit of a response head.
func (t *Transport) maxHeaderBytes() int64 {
	if n := t.fb.MaxResponseHeaderBytes; n > 0 {
		return n
	}
	return defaultMaxHeaderBytes
}

// roundTrip sends req on c and reads the response head. On an error c is
// closed; a nothingWrittenError or a readFromServerError tells the
// caller it may send req again.
func (c *conn) roundTrip(req *http.Request, trace *httptrace.ClientTrace) (*http.Response, error) {
	ctx := req.Context()
	stop := context.AfterFunc(ctx, func() { c.cancel(context.Cause(ctx)) })
	fail := func(err error) (*http.Response, error) {
		stop()
		c.close()
		if cerr := c.canceledErr(); cerr != nil {
			return nil, cerr
		}
		return nil, err
	}
	gzipped := false
	out := req
	if !c.t.fb.DisableCompression && req.Method != http.MethodHead &&
		len(req.Header["Accept-Encoding"]) == 0 && len(req.Header["Range"]) == 0 {
		// As net/http: ask for gzip, and decode it below.
		gzipped = true
		out = new(http.Request)
		*out = *req
		out.Header = req.Header.Clone()
		out.Header.Set("Accept-Encoding", "gzip")
	}
	start := c.nwrite
	if err := c.write(out); err != nil {
		if c.nwrite == start {
			return fail(&nothingWrittenError{err})
		}
		// The server may have answered before reading the whole request
		// (a 413 before a large body) and closed: that answer is the
		// response.
		if resp, rerr := c.readHead(req, trace); rerr == nil {
			return c.respond(req, resp, gzipped, stop, false), nil
		}
		return fail(fmt.Errorf("h1: connection broken while writing the request: %w", err))
	}
	resp, err := c.readHead(req, trace)
	if err != nil {
		return fail(err)
	}
	return c.respond(req, resp, gzipped, stop, true), nil
}

// write writes req through a pooled write buffer, released before it
// returns. A write the connection failed returns the connection's error:
// Request.Write reports one inside the body as an error of the body's
// read, which hides its cause.
func (c *conn) write(req *http.Request) error {
	bw := c.t.writers.Get().(*bufio.Writer)
	bw.Reset(c)
	c.werr = nil
	err := req.Write(requestWriter{bw}) // calls WroteHeaders and WroteRequest
	if err == nil {
		err = bw.Flush()
	}
	bw.Reset(nil)
	c.t.writers.Put(bw)
	if err != nil && c.werr != nil {
		return c.werr
	}
	return err
}

// requestWriter is the writer Request.Write writes a request to: the
// pooled buffer under a type of its own, so that the head and a body
// that fits the buffer go out in one write (one packet), as net/http
// sends a request whose body it knows to be in memory. Request.Write
// flushes a *bufio.Writer after the head when it does not know the
// body's type (the client's bodies are in memory, behind a counting
// Close); it copies a body of known length through ReadFrom, which then
// flushes, so that the whole request is on its way, or its write has
// failed, before Request.Write reports WroteRequest.
type requestWriter struct{ *bufio.Writer }

// ReadFrom buffers r (writing what fills the buffer) and flushes.
func (w requestWriter) ReadFrom(r io.Reader) (int64, error) {
	n, err := w.Writer.ReadFrom(r)
	if err == nil {
		err = w.Flush()
	}
	return n, err
}

// readHead reads the response head to req, skipping 1xx answers other
// than 101.
func (c *conn) readHead(req *http.Request, trace *httptrace.ClientTrace) (*http.Response, error) {
	c.readLimit = c.t.maxHeaderBytes()
	if _, err := c.br.Peek(1); err != nil {
		return nil, &readFromServerError{err}
	}
	if trace != nil && trace.GotFirstResponseByte != nil {
		trace.GotFirstResponseByte()
	}
	for {
		resp, err := http.ReadResponse(c.br, req)
		if err != nil {
			return nil, fmt.Errorf("h1: connection broken: %w", err)
		}
		if code := resp.StatusCode; code >= 100 && code <= 199 && code != http.StatusSwitchingProtocols {
			if trace != nil && trace.Got1xxResponse != nil {
				if err := trace.Got1xxResponse(code, textproto.MIMEHeader(resp.Header)); err != nil {
					return nil, err
				}
				c.readLimit = c.t.maxHeaderBytes()
			}
			continue
		}
		c.readLimit = math.MaxInt64
		return resp, nil
	}
}

// respond finishes a response head read on c: its body reads c, which
// goes back to the idle list when the body is read to its end and the
// exchange allows reuse (keep: the request was written whole).
func (c *conn) respond(req *http.Request, resp *http.Response, gzipped bool, stop func() bool, keep bool) *http.Response {
	alive := keep && !resp.Close && !req.Close && resp.StatusCode > 199
	b := &body{c: c, rc: resp.Body, stop: stop, alive: alive, trace: httptrace.ContextClientTrace(req.Context())}
	if req.Method == http.MethodHead || resp.ContentLength == 0 {
		b.finish(true) // no body: the connection is free now
		return resp
	}
	resp.Body = b
	if gzipped && strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") {
		resp.Body = &gzipBody{body: b}
		resp.Header.Del("Content-Encoding")
		resp.Header.Del("Content-Length")
		resp.ContentLength = -1
		resp.Uncompressed = true
	}
	return resp
}

// errReadOnClosedBody is the error of a read after Close.
var errReadOnClosedBody = errors.New("http: read on closed response body")

// body is a response body read from its connection on the reader's
// goroutine. Close may come from another goroutine while a Read waits:
// it then closes the connection, which ends the Read.
type body struct {
	c     *conn
	rc    io.ReadCloser // net/http's framing of the body (ReadResponse)
	stop  func() bool   // stops the context's AfterFunc
	alive bool
	trace *httptrace.ClientTrace

	mu     sync.Mutex
	rerr   error
	closed bool
	done   bool // the connection was put back or closed
}

// Read reads the body; at its end the connection goes back to the pool.
func (b *body) Read(p []byte) (int, error) {
	b.mu.Lock()
	switch {
	case b.rerr != nil:
		err := b.rerr
		b.mu.Unlock()
		return 0, err
	case b.closed:
		b.mu.Unlock()
		return 0, errReadOnClosedBody
	}
	b.mu.Unlock()
	n, err := b.rc.Read(p)
	if err == nil {
		return n, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != io.EOF { //nolint:errorlint // a body's end is io.EOF itself
		if cerr := b.c.canceledErr(); cerr != nil {
			err = cerr
		}
	}
	b.rerr = err
	b.finish(err == io.EOF) //nolint:errorlint // as above
	return n, err
}

// Close closes the body; before its end, that closes the connection.
func (b *body) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.closed = true
		b.finish(false)
	}
	return nil
}

// finish puts the connection back when the body was read to its end and
// the exchange allows it, else closes it (once).
func (b *body) finish(atEOF bool) {
	if b.done {
		return
	}
	b.done = true
	c := b.c
	stopped := b.stop() // false: the context is done and closes c
	if !atEOF || !b.alive || !stopped || c.sawEOF {
		c.close()
		return
	}
	kept := c.t.putIdle(c)
	if b.trace != nil && b.trace.PutIdleConn != nil {
		var err error
		if !kept {
			err = errIdleListFull
		}
		b.trace.PutIdleConn(err)
	}
}

// gzipBody decodes a gzip body net/http's way: the decoder is made at the
// first Read.
type gzipBody struct {
	body *body
	zr   *gzip.Reader
	zerr error
}

func (g *gzipBody) Read(p []byte) (int, error) {
	if g.zr == nil && g.zerr == nil {
		g.zr, g.zerr = gzip.NewReader(g.body)
	}
	if g.zerr != nil {
		return 0, g.zerr
	}
	return g.zr.Read(p)
}

func (g *gzipBody) Close() error { return g.body.Close() }

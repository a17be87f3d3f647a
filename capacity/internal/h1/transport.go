package h1

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync"
	"time"

	"golang.org/x/net/http/httpguts"
)

// readBufferSize is the size of a connection's read buffer, net/http's:
// every read of the connection goes through it (a chunked body's size
// lines too), so it bounds how many bytes of a fast stream one read
// system call takes; a smaller one costs CPU per chunk.
const readBufferSize = 4 << 10

// defaultWriteBufferSize is the write buffer of a fallback that sets no
// WriteBufferSize (net/http's default).
const defaultWriteBufferSize = 4 << 10

// defaultMaxHeaderBytes is the response head limit of a fallback that
// sets no MaxResponseHeaderBytes (net/http's DefaultMaxHeaderBytes).
const defaultMaxHeaderBytes = http.DefaultMaxHeaderBytes

// A Transport is an http.RoundTripper that sends plain HTTP/1.1 requests
// on the caller's goroutine and every other request through its fallback
// (see the package documentation). It is safe for concurrent use. The
// zero value is not usable; use New.
type Transport struct {
	fb      *http.Transport
	writers sync.Pool // *bufio.Writer of the fallback's write buffer size

	mu   sync.Mutex
	idle map[string][]*conn // by host:port, the most recently used last
}

var _ http.RoundTripper = (*Transport)(nil)

// New returns a Transport over fallback, whose settings it reads when it
// uses them (its DialContext at each dial), so a fallback changed before
// its first use is seen. fallback must not be nil.
func New(fallback *http.Transport) *Transport {
	t := &Transport{fb: fallback, idle: map[string][]*conn{}}
	t.writers.New = func() any {
		size := fallback.WriteBufferSize
		if size <= 0 {
			size = defaultWriteBufferSize
		}
		return bufio.NewWriterSize(nil, size)
	}
	return t
}

// Fallback returns the transport of the requests t does not send itself.
func (t *Transport) Fallback() *http.Transport { return t.fb }

// CloseIdleConnections closes the idle connections of t and of its
// fallback.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = map[string][]*conn{}
	t.mu.Unlock()
	for _, cs := range idle {
		for _, c := range cs {
			c.close()
		}
	}
	t.fb.CloseIdleConnections()
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.serves(req) {
		return t.fb.RoundTrip(req)
	}
	ctx := req.Context()
	trace := httptrace.ContextClientTrace(ctx)
	key := hostPort(req.URL)
	for {
		if ctx.Err() != nil {
			closeBody(req)
			return nil, context.Cause(ctx)
		}
		c, err := t.getConn(ctx, trace, key)
		if err != nil {
			closeBody(req)
			return nil, err
		}
		resp, err := c.roundTrip(req, trace)
		if err == nil {
			return resp, nil
		}
		var nw *nothingWrittenError
		if !errors.As(err, &nw) && !errors.As(err, new(*readFromServerError)) {
			return nil, err
		}
		if !c.reused || !sendAgain(req, nw != nil) {
			if nw != nil {
				return nil, nw.err
			}
			return nil, err
		}
		if req, err = rewound(req); err != nil {
			return nil, err
		}
	}
}

// serves reports whether t sends req itself: a valid request to a plain
// http URL its fallback would reach without a proxy, over HTTP/1.1, with
// nothing in it or in the fallback's settings that t does not implement.
func (t *Transport) serves(req *http.Request) bool {
	u, fb := req.URL, t.fb
	if u == nil || u.Scheme != "http" || u.Host == "" || req.Header == nil || req.Method == http.MethodConnect {
		return false
	}
	//lint:ignore SA1019 a fallback dialing with the deprecated Dial sends its own requests
	if fb.Dial != nil && fb.DialContext == nil {
		return false
	}
	if fb.DisableKeepAlives || fb.ResponseHeaderTimeout > 0 ||
		(fb.Protocols != nil && (!fb.Protocols.HTTP1() || fb.Protocols.UnencryptedHTTP2())) {
		return false
	}
	if len(req.Header["Expect"]) > 0 || len(req.Header["Upgrade"]) > 0 {
		return false
	}
	for k, vs := range req.Header {
		if !httpguts.ValidHeaderFieldName(k) {
			return false // the fallback reports it
		}
		for _, v := range vs {
			if !httpguts.ValidHeaderFieldValue(v) {
				return false
			}
		}
	}
	if fb.Proxy != nil {
		if p, err := fb.Proxy(req); p != nil || err != nil {
			return false
		}
	}
	return true
}

// sendAgain reports whether req, failed on a reused connection before a
// response byte, may be sent again: when nothing of it was written, if
// its body can be sent again; else when it is replayable.
func sendAgain(req *http.Request, nothingWritten bool) bool {
	noBody := req.Body == nil || req.Body == http.NoBody
	if nothingWritten {
		return noBody || req.GetBody != nil
	}
	if !noBody && req.GetBody == nil {
		return false
	}
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return len(req.Header["Idempotency-Key"]) > 0 || len(req.Header["X-Idempotency-Key"]) > 0
}

// rewound returns req ready to be sent again: itself when it has no body,
// else a copy with a new body from GetBody.
func rewound(req *http.Request) (*http.Request, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return req, nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	again := *req
	again.Body = body
	return &again, nil
}

// closeBody closes the body of a request that will not be written.
func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// hostPort is u's host and port, the port of http when u names none.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// getConn returns a connection to key: the most recently used idle one
// that is still usable, else a new one dialed with ctx.
func (t *Transport) getConn(ctx context.Context, trace *httptrace.ClientTrace, key string) (*conn, error) {
	if trace != nil && trace.GetConn != nil {
		trace.GetConn(key)
	}
	if c := t.takeIdle(key); c != nil {
		if trace != nil && trace.GotConn != nil {
			trace.GotConn(httptrace.GotConnInfo{Conn: c.nc, Reused: true, WasIdle: true, IdleTime: time.Since(c.idleAt)})
		}
		return c, nil
	}
	nc, err := t.dial(ctx, key)
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	c := &conn{t: t, key: key, nc: nc}
	c.br = bufio.NewReaderSize(c, readBufferSize)
	if trace != nil && trace.GotConn != nil {
		trace.GotConn(httptrace.GotConnInfo{Conn: nc})
	}
	return c, nil
}

// dial dials key with the fallback's dialer.
func (t *Transport) dial(ctx context.Context, key string) (net.Conn, error) {
	if t.fb.DialContext != nil {
		return t.fb.DialContext(ctx, "tcp", key)
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", key)
}

// takeIdle returns the most recently used idle connection to key that is
// still usable, nil when there is none; it closes the ones it finds
// unusable on its way.
func (t *Transport) takeIdle(key string) *conn {
	for {
		t.mu.Lock()
		cs := t.idle[key]
		if len(cs) == 0 {
			t.mu.Unlock()
			return nil
		}
		c := cs[len(cs)-1]
		cs[len(cs)-1] = nil
		t.idle[key] = cs[:len(cs)-1]
		t.mu.Unlock()
		if d := t.fb.IdleConnTimeout; d > 0 && time.Since(c.idleAt) > d {
			c.close()
			continue
		}
		switch peek(c.nc) {
		case peerEOF:
			// Read the end of stream, as net/http's reader of an idle
			// connection does, so that a connection watching its reads
			// sees the server's close.
			var b [1]byte
			_, _ = c.nc.Read(b[:])
			c.close()
			continue
		case peerData: // an answer nobody asked for
			c.close()
			continue
		}
		return c
	}
}

// putIdle puts c, whose last answer was read to its end, in the idle
// list of its host, or closes it when the list is full; it reports
// whether c was kept.
func (t *Transport) putIdle(c *conn) bool {
	limit := t.fb.MaxIdleConnsPerHost
	if limit == 0 {
		limit = http.DefaultMaxIdleConnsPerHost
	}
	c.reused, c.idleAt = true, time.Now()
	t.mu.Lock()
	if cs := t.idle[c.key]; limit > 0 && len(cs) < limit {
		t.idle[c.key] = append(cs, c)
		t.mu.Unlock()
		return true
	}
	t.mu.Unlock()
	c.close()
	return false
}

// errIdleListFull is what PutIdleConn reports for a connection closed
// because its host's idle list was full.
var errIdleListFull = errors.New("h1: too many idle connections for the host")

// nothingWrittenError is the error of an attempt that failed before any
// byte of the request was written.
type nothingWrittenError struct{ err error }

func (e *nothingWrittenError) Error() string { return e.err.Error() }
func (e *nothingWrittenError) Unwrap() error { return e.err }

// readFromServerError is the error of a connection that ended (or
// failed) before the first byte of the response.
type readFromServerError struct{ err error }

func (e *readFromServerError) Error() string {
	return "the connection ended before the response's first byte: " + e.err.Error()
}
func (e *readFromServerError) Unwrap() error { return e.err }

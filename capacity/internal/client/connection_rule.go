package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anvilbench/anvil/capacity/internal/h1"
	"github.com/anvilbench/anvil/capacity/internal/rxstamp"
)

// This file is the connection rule of every HTTP client of the module
// (capacity/PROTOCOL.md#connection-rule): when a request is sent again,
// and what the client does with a server that closes the connections it
// answered on although it kept them alive (llama.cpp's llama-server after
// every streamed response).

// keptAliveCloseWindow separates a server that closes a connection right
// after answering on it from a keep-alive idle timeout: a close within it
// of the connection's last answer (or of its return to the pool) is the
// former. Servers' idle timeouts are seconds (5 s for llama.cpp's
// advertised Keep-Alive, uvicorn and Node.js; 75 s for nginx).
const keptAliveCloseWindow = time.Second

// A ConnectionRule is an http.RoundTripper that sends requests under the
// module's connection rule (capacity/PROTOCOL.md#connection-rule):
//
//   - A request is sent again at most once, and only after an attempt on a
//     kept-alive connection that ended without a response byte. A measured
//     request is sent again only if the attempt was not completely
//     written: once the whole request was written the server may have
//     processed it, and it is a failure. Any other request (the model
//     probe, window discovery, tokenizer, warm-up, calibration, connection
//     pre-warming, conformance checks) is also sent again after a
//     complete write: none of them is measured, and sending it twice
//     changes no count.
//   - A server seen closing a kept-alive connection within
//     keptAliveCloseWindow of answering on it (or of taking the next
//     request on it) is served without reuse from then on: every request
//     asks for its connection to be closed after it, so each dials its own
//     inside its timings.
//
// The zero value is not usable; use NewConnectionRule. It is safe for
// concurrent use.
type ConnectionRule struct {
	base http.RoundTripper

	noReuse atomic.Bool
	closes  atomic.Int64 // kept-alive connections seen closed right after an answer
}

var _ http.RoundTripper = (*ConnectionRule)(nil)

// NewConnectionRule returns the rule over base (http.DefaultTransport when
// nil); base itself when it already follows the rule, so wrapping twice
// changes nothing.
func NewConnectionRule(base http.RoundTripper) *ConnectionRule {
	if r, ok := base.(*ConnectionRule); ok {
		return r
	}
	if base == nil {
		base = http.DefaultTransport
	}
	return &ConnectionRule{base: base}
}

// KeptAliveClosed returns how many times the server was seen closing a
// kept-alive connection right after answering on it; from the first one
// on, no connection is reused.
func (r *ConnectionRule) KeptAliveClosed() int { return int(r.closes.Load()) }

// ReuseDisabled reports whether requests are sent without connection
// reuse (KeptAliveClosed > 0).
func (r *ConnectionRule) ReuseDisabled() bool { return r.noReuse.Load() }

// CloseIdleConnections closes the idle connections of the base transport
// when it has any.
func (r *ConnectionRule) CloseIdleConnections() {
	if c, ok := r.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// sawKeptAliveClose records one close of a kept-alive connection right
// after an answer; the first disables reuse and empties the pool.
func (r *ConnectionRule) sawKeptAliveClose() {
	if r.closes.Add(1) == 1 {
		r.noReuse.Store(true)
		r.CloseIdleConnections()
	}
}

// measuredKey marks a request's context as a measured request's.
type measuredKey struct{}

// withMeasured marks ctx as the context of a measured request, which the
// rule never sends again once completely written.
func withMeasured(ctx context.Context) context.Context {
	return context.WithValue(ctx, measuredKey{}, true)
}

// isMeasured reports whether ctx is a measured request's (withMeasured).
func isMeasured(ctx context.Context) bool { v, _ := ctx.Value(measuredKey{}).(bool); return v }

// keptAliveClosedError is the error of a request that met a kept-alive
// connection the server closed without answering, after the whole request
// had been written: a measured request is not sent again (the server may
// have processed it). Err is the transport's error.
type keptAliveClosedError struct {
	Err error
}

// Error says what happened and that the request was not sent again.
func (e *keptAliveClosedError) Error() string {
	return fmt.Sprintf("the server closed the kept-alive connection after the whole request was written, without a response byte (%v): not sent again, since the server may have processed it", e.Err)
}

// Unwrap returns the transport's error.
func (e *keptAliveClosedError) Unwrap() error { return e.Err }

// RoundTrip implements http.RoundTripper under the rule.
func (r *ConnectionRule) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	for attempt := 0; ; attempt++ {
		if r.noReuse.Load() && !req.Close {
			req = req.Clone(ctx)
			req.Close = true
		}
		var at attemptWatch
		resp, err := r.base.RoundTrip(req.WithContext(at.attach(ctx)))
		if at.innerStale() && (err != nil || resp.ProtoMajor == 1) {
			// The transport itself found the connection closed and sent
			// the request again on another (nothing had been written).
			// (An HTTP/2 server's GOAWAY makes it do so too: not counted.)
			r.noteClose(at.first)
		}
		if err == nil {
			if wc := watchedOf(at.lastConn()); wc != nil && !resp.Close && resp.ProtoMajor == 1 {
				resp.Body = &answerBody{ReadCloser: resp.Body, conn: wc}
			}
			return resp, nil
		}
		last := at.last()
		if attempt > 0 || ctx.Err() != nil || !last.reused || last.firstByte || !closedWithoutAnswer(err) {
			return nil, err
		}
		r.noteClose(last)
		if (last.wrote && isMeasured(ctx)) || (req.Body != nil && req.Body != http.NoBody && req.GetBody == nil) {
			if last.wrote {
				return nil, &keptAliveClosedError{Err: err}
			}
			return nil, err
		}
		again := req.Clone(ctx)
		if req.GetBody != nil {
			if again.Body, err = req.GetBody(); err != nil {
				return nil, err
			}
		}
		req = again
	}
}

// noteClose counts a kept-alive connection found closed under a request
// when it had been idle for less than keptAliveCloseWindow (a longer idle
// time is an idle timeout, which is the server's right).
func (r *ConnectionRule) noteClose(a connAttempt) {
	if a.reused && a.idle < keptAliveCloseWindow {
		r.sawKeptAliveClose()
	}
}

// closedWithoutAnswer reports whether a transport error is one a closed
// connection gives: EOF, a reset or a broken pipe, net/http's "server
// closed idle connection", or another network error.
func closedWithoutAnswer(err error) bool {
	var ka *keptAliveClosedError
	if errors.As(err, &ka) {
		return false
	}
	switch transportErrorType(UnwrapURLError(err)) {
	case ErrorTypeEOF, ErrorTypeConnectionReset, ErrorTypeNetwork:
		return true
	}
	return false
}

// connAttempt is what the rule needs of one attempt (one connection taken
// inside a RoundTrip of the base transport).
type connAttempt struct {
	conn      net.Conn
	reused    bool
	idle      time.Duration // how long the connection was idle before, when reused
	wrote     bool          // the request was completely written
	firstByte bool          // a response byte arrived
}

// attemptWatch follows the attempts of one RoundTrip of the base
// transport, which may itself take a second connection when the first was
// found closed before anything was written.
type attemptWatch struct {
	mu       sync.Mutex
	first    connAttempt
	attempts int
	cur      connAttempt
}

// ruleTraceKey is the context key of withRuleTrace.
type ruleTraceKey struct{}

// withRuleTrace returns ctx carrying t for the ConnectionRule under the
// request to call from its own trace: its hooks after the rule's, every
// other hook of t as it is. Two traces attached one over the other are
// composed by net/http/httptrace through reflect.MakeFunc, each hook then
// called through reflect.Value.Call: about a tenth of a request's CPU
// (perfbench's BenchmarkCPUPerRequest), for what one trace of direct calls
// does.
func withRuleTrace(ctx context.Context, t *httptrace.ClientTrace) context.Context {
	return context.WithValue(ctx, ruleTraceKey{}, t)
}

// attach returns ctx with a trace that follows the attempts into w, and
// calls the request's own trace of withRuleTrace when ctx has one.
func (w *attemptWatch) attach(ctx context.Context) context.Context {
	trace := &httptrace.ClientTrace{}
	var (
		gotConn      func(httptrace.GotConnInfo)
		wroteRequest func(httptrace.WroteRequestInfo)
		gotFirstByte func()
	)
	if inner, _ := ctx.Value(ruleTraceKey{}).(*httptrace.ClientTrace); inner != nil {
		*trace = *inner
		gotConn, wroteRequest, gotFirstByte = inner.GotConn, inner.WroteRequest, inner.GotFirstResponseByte
	}
	trace.GotConn = func(info httptrace.GotConnInfo) {
		w.mu.Lock()
		w.attempts++
		w.cur = connAttempt{conn: info.Conn, reused: info.Reused, idle: info.IdleTime}
		if w.attempts == 1 {
			w.first = w.cur
		}
		w.mu.Unlock()
		if gotConn != nil {
			gotConn(info)
		}
	}
	trace.WroteRequest = func(info httptrace.WroteRequestInfo) {
		w.mu.Lock()
		w.cur.wrote = info.Err == nil
		w.mu.Unlock()
		if wroteRequest != nil {
			wroteRequest(info)
		}
	}
	trace.GotFirstResponseByte = func() {
		w.mu.Lock()
		w.cur.firstByte = true
		w.mu.Unlock()
		if gotFirstByte != nil {
			gotFirstByte()
		}
	}
	return httptrace.WithClientTrace(ctx, trace)
}

// innerStale reports whether the base transport took a second connection
// because the first, a kept-alive one, was closed.
func (w *attemptWatch) innerStale() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.attempts > 1 && w.first.reused && !w.first.firstByte
}

// last returns the last attempt.
func (w *attemptWatch) last() connAttempt {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cur
}

// lastConn returns the last attempt's connection.
func (w *attemptWatch) lastConn() net.Conn { return w.last().conn }

// answerBody tells the connection that carried an answer when the answer
// was read to its end: the connection is then idle in the pool.
type answerBody struct {
	io.ReadCloser
	conn *watchedConn
	done bool
}

// Read reads the answer, telling the connection when it ended.
func (b *answerBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done { //nolint:errorlint // a body's end is io.EOF itself
		b.done = true
		b.conn.answered()
	}
	return n, err
}

// watchDials makes tr's connections report a server's close right after
// an answer to r: only a transport the run made itself (Target.HTTPClient
// nil) is changed. Each connection also checks, before the first write of
// a request on it, whether the server has already closed it (peerClosed),
// and then fails that write without writing anything, so the transport
// sends the request on another connection with nothing lost.
func (r *ConnectionRule) watchDials(tr *http.Transport) {
	dial := tr.DialContext
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &watchedConn{Conn: c, rx: rxstamp.New(c), rule: r, base: time.Now(), yield: runtime.Gosched}, nil
	}
}

// errPeerClosed is the error of a write refused because the server had
// already closed the connection.
var errPeerClosed = errors.New("the server closed the kept-alive connection before the request was written")

// watchedConn is a connection of the run's own transport that notices the
// server closing it right after an answer.
type watchedConn struct {
	net.Conn
	rx   *rxstamp.Reader // reads Conn with the kernel's receive times; nil where there are none
	rule *ConnectionRule

	// base is the connection's dial; read is the end of its last read that
	// returned bytes, in ns after base (see lastRead).
	base time.Time
	read atomic.Int64
	// reads counts the reads that returned bytes since the last write (a
	// request's), up to yieldReads.
	reads atomic.Int32
	yield func() // runtime.Gosched; a test's counter

	mu         sync.Mutex
	idleSince  time.Time // an answer was read to its end and no request written since
	peerClosed bool      // a read saw the server's close
	reported   bool
}

// watchedOf returns the watched connection under c (a TLS connection's
// too), nil when c is not one.
func watchedOf(c net.Conn) *watchedConn {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	wc, _ := c.(*watchedConn)
	return wc
}

// lastRead is the moment the bytes of the connection's last read that
// returned bytes reached the host (monotonic): the kernel's receive time
// of the last of them where package rxstamp reads it, else the end of
// that read; when the bytes a reader of the connection has were in the
// process at the latest. Reads of one connection never overlap (the
// transport reads it from one goroutine at a time).
func (c *watchedConn) lastRead() time.Time { return c.base.Add(time.Duration(c.read.Load())) }

// answered records that an answer on the connection was read to its end.
func (c *watchedConn) answered() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.idleSince = time.Now()
	if c.peerClosed {
		c.reportLocked(c.idleSince) // the close was read before the answer's end was seen
	}
}

// reportLocked reports the server's close of a connection idle since
// since, when that is within keptAliveCloseWindow (once per connection).
func (c *watchedConn) reportLocked(since time.Time) {
	if !c.reported && time.Since(since) < keptAliveCloseWindow {
		c.reported = true
		c.rule.sawKeptAliveClose()
	}
}

// Read reads from the connection, noting the arrival of a read's bytes
// (lastRead) and the server's close.
func (c *watchedConn) Read(p []byte) (n int, err error) {
	if c.rx != nil {
		var at time.Time
		if n, at, err = c.rx.Read(p); n > 0 {
			c.read.Store(int64(at.Sub(c.base)))
		}
	} else if n, err = c.Conn.Read(p); n > 0 {
		c.read.Store(int64(time.Since(c.base)))
	}
	if n > 0 && c.reads.Load() < yieldReads {
		c.reads.Add(1)
		c.yield()
	}
	if err != nil && n == 0 && !errors.Is(err, net.ErrClosed) && !errors.Is(err, os.ErrDeadlineExceeded) {
		c.mu.Lock()
		c.peerClosed = true
		if !c.idleSince.IsZero() {
			c.reportLocked(c.idleSince)
		}
		c.mu.Unlock()
	}
	return n, err
}

// yieldReads is how many reads of an answer yield the processor once they
// have their bytes (runtime.Gosched): a burst wakes the goroutines of many
// streams at once, and each parses its answer's head and first events
// before the next one reads; the kernel merges packets that wait unread
// and keeps the newest one's time (package rxstamp), so a stream whose
// first read came after its next event lost its first event's arrival.
// Yielding once the first read has its bytes lets every goroutine woken
// with it read its own before any parses (where the stamps are the reads'
// ends, it lets each take its stamp before the others parse). One: the
// read of the head, which brings the first events when they come with it;
// each yield costs a pass through the scheduler, and four cost about a
// fifth of a request's CPU in BenchmarkCPUPerRequest.
const yieldReads = 1

// NetConn returns the connection under c, for a look at its socket
// (h1.PeerClosed).
func (c *watchedConn) NetConn() net.Conn { return c.Conn }

// Write writes to the connection; the first write of a request on a
// kept-alive connection the server already closed writes nothing and
// fails with errPeerClosed.
func (c *watchedConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	since := c.idleSince // non-zero: the first write of a request on a kept-alive connection
	c.idleSince = time.Time{}
	c.mu.Unlock()
	if !since.IsZero() && h1.PeerClosed(c.Conn) {
		c.mu.Lock()
		c.peerClosed = true
		c.reportLocked(since)
		c.mu.Unlock()
		return 0, errPeerClosed
	}
	c.reads.Store(0) // a request: its answer's first reads yield
	return c.Conn.Write(p)
}

// WithConnectionRule returns hc sending through a ConnectionRule, and the
// rule. own is the *http.Transport that dials the connections of a
// transport the run made itself (hc's transport, or the fallback under
// its h1.Transport; nil for a Target.HTTPClient), whose connections the
// rule then also watches.
func WithConnectionRule(hc *http.Client, own *http.Transport) (*http.Client, *ConnectionRule) {
	rule := NewConnectionRule(hc.Transport)
	if own != nil {
		rule.watchDials(own) // before the first dial: a transport is never changed in use
	}
	return &http.Client{Transport: rule, CheckRedirect: hc.CheckRedirect, Jar: hc.Jar, Timeout: hc.Timeout}, rule
}

// baseTransport is the transport under a ConnectionRule (rt itself
// otherwise), for what asks about the transport's own settings.
func baseTransport(rt http.RoundTripper) http.RoundTripper {
	if r, ok := rt.(*ConnectionRule); ok {
		return r.base
	}
	return rt
}

// Package pipenet is an in-memory network for tests: a net.Listener whose
// connections are net.Pipe pairs, and an HTTP server on one with a client
// that dials it. Nothing leaves the process, and, created inside a
// testing/synctest bubble, all its blocking is durable, so the bubble's
// fake time advances while requests wait on a slow handler.
//
// Only tests import it (those of package capacity and its subpackages);
// the engine does not. It is the in-memory counterpart of
// net/http/httptest: a Server is a value you start with NewServer and
// Close.
package pipenet

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// ErrRefused is the error of a dial to a closed Listener.
var ErrRefused = errors.New("pipe listener closed: connection refused")

// Listener is an in-memory net.Listener: every DialContext makes a
// net.Pipe whose server end Accept returns. The zero value is not usable;
// call Listen.
type Listener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
	dials  atomic.Int64
}

var _ net.Listener = (*Listener)(nil)

// Listen returns a Listener ready to accept.
func Listen() *Listener {
	return &Listener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

// Accept waits for the next dial and returns the server end of its pipe;
// after Close it returns net.ErrClosed.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

// Close stops Accept and makes later dials fail with ErrRefused. It is
// safe to call more than once.
func (l *Listener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

// Addr is the address "pipe" of network "pipe".
func (l *Listener) Addr() net.Addr { return pipeAddr{} }

// DialContext connects to the Listener whatever network and addr say, in
// the signature of http.Transport.DialContext: it returns the client end
// of a new pipe once Accept has taken the server end, ErrRefused once the
// Listener is closed, or ctx's error.
func (l *Listener) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		l.dials.Add(1)
		return client, nil
	case <-l.closed:
		return nil, ErrRefused
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Dials is how many dials have connected so far: the connections the
// Listener has accepted. A dial's count is in place when DialContext
// returns.
func (l *Listener) Dials() int { return int(l.dials.Load()) }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// maxIdlePerHost is how many idle connections a Server's client keeps:
// more than any test's concurrency, so connections are reused, not
// dialled again.
const maxIdlePerHost = 256

// Server is an HTTP server on a Listener of its own, with a client that
// dials it.
type Server struct {
	// URL is "http://pipe": the client reaches the server at any URL,
	// this one names it.
	URL string
	// Listener is the server's listener; a test may dial it directly.
	Listener *Listener

	srv    *http.Server
	tr     *http.Transport
	client *http.Client
	done   chan struct{}
}

// NewServer starts serving h and returns the Server; the caller must Close
// it.
func NewServer(h http.Handler) *Server {
	ln := Listen()
	s := &Server{
		URL:      "http://" + ln.Addr().String(),
		Listener: ln,
		srv:      &http.Server{Handler: h},
		tr:       &http.Transport{DialContext: ln.DialContext, MaxIdleConnsPerHost: maxIdlePerHost},
		done:     make(chan struct{}),
	}
	s.client = &http.Client{Transport: s.tr}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s
}

// Client returns the client whose connections reach the server.
func (s *Server) Client() *http.Client { return s.client }

// Close closes the client's idle connections, then the server and all its
// connections, active ones included (unlike httptest.Server.Close, it
// does not wait for handlers to return), and waits for the server to stop
// serving.
func (s *Server) Close() {
	s.tr.CloseIdleConnections()
	_ = s.srv.Close()
	<-s.done
}

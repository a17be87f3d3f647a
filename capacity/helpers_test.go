package capacity

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"testing"
)

// pipeListener is an in-memory net.Listener: every dial makes a net.Pipe
// whose server end is accepted. Created inside a synctest bubble, all its
// blocking is durable, so fake time advances while requests wait.
type pipeListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
		return nil, errors.New("pipe listener closed: connection refused")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// servePipe serves h over an in-memory transport and returns a client for
// it; the server and the client's connections are closed at cleanup.
func servePipe(t testing.TB, h http.Handler) *http.Client {
	ln := newPipeListener()
	srv := &http.Server{Handler: h}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	tr := &http.Transport{DialContext: ln.dial, MaxIdleConnsPerHost: 64}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		_ = srv.Close()
		<-done
	})
	return &http.Client{Transport: tr}
}

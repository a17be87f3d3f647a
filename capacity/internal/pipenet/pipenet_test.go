package pipenet

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// TestServerAnswersAndReusesConnections: requests reach the handler over
// the pipe, the answer comes back whole, and sequential requests share one
// connection.
func TestServerAnswersAndReusesConnections(t *testing.T) {
	s := NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.Method+" "+r.URL.Path)
	}))
	defer s.Close()
	require.Equal(t, "http://pipe", s.URL)
	for _, path := range []string{"/a", "/b", "/c"} {
		resp, err := s.Client().Get(s.URL + path)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, "GET "+path, string(body))
	}
	require.Equal(t, 1, s.Listener.Dials(), "one kept-alive connection for three requests")
	s.Client().CloseIdleConnections()
	resp, err := s.Client().Get(s.URL)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, 2, s.Listener.Dials(), "a new connection once the idle one is closed")
}

// TestServerDelayOnFakeTime: inside a synctest bubble a handler's sleep
// passes on the bubble's clock, exactly.
func TestServerDelayOnFakeTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			time.Sleep(3 * time.Second)
		}))
		defer s.Close()
		start := time.Now()
		resp, err := s.Client().Get(s.URL)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, 3*time.Second, time.Since(start))
	})
}

// TestServerCloseEndsActiveRequests: Close does not wait for a handler
// that never returns on its own; the request fails.
func TestServerCloseEndsActiveRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		arrived := make(chan struct{})
		s := NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			close(arrived)
			<-r.Context().Done()
		}))
		errc := make(chan error, 1)
		go func() {
			resp, err := s.Client().Get(s.URL)
			if err == nil {
				_ = resp.Body.Close()
			}
			errc <- err
		}()
		<-arrived
		s.Close()
		require.Error(t, <-errc)
	})
}

// TestListenerClosed: after Close, Accept returns net.ErrClosed and a dial
// ErrRefused; Close again is harmless.
func TestListenerClosed(t *testing.T) {
	ln := Listen()
	require.NoError(t, ln.Close())
	require.NoError(t, ln.Close())
	_, err := ln.Accept()
	require.ErrorIs(t, err, net.ErrClosed)
	_, err = ln.DialContext(context.Background(), "tcp", "anywhere:1")
	require.ErrorIs(t, err, ErrRefused)
	require.Equal(t, "pipe", ln.Addr().Network())
	require.Equal(t, "pipe", ln.Addr().String())
}

// TestListenerDialCanceled: a dial nobody accepts ends with its context.
func TestListenerDialCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Listen().DialContext(ctx, "tcp", "pipe")
	require.ErrorIs(t, err, context.Canceled)
}

// TestListenerPipe: the bytes written on the dialled end arrive on the
// accepted end.
func TestListenerPipe(t *testing.T) {
	ln := Listen()
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	c, err := ln.DialContext(context.Background(), "tcp", "pipe")
	require.NoError(t, err)
	defer c.Close()
	srv := <-accepted
	defer srv.Close()
	go func() { _, _ = io.WriteString(c, "hello") }()
	buf := make([]byte, 5)
	_, err = io.ReadFull(srv, buf)
	require.NoError(t, err)
	require.Equal(t, "hello", string(buf))
}

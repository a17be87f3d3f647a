package h1_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/h1"
	"github.com/anvilbench/anvil/capacity/internal/pipenet"
)

// servePipe answers every request on ln with script until the test ends.
func servePipe(t *testing.T, ln *pipenet.Listener, script func(c net.Conn, req *http.Request) bool) {
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					_, _ = io.Copy(io.Discard, req.Body)
					if !script(c, req) {
						return
					}
				}
			})
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		wg.Wait()
	})
}

// pause waits d, or until the test ends.
func pause(t *testing.T, d time.Duration) {
	select {
	case <-time.After(d):
	case <-t.Context().Done():
	}
}

// TestIdleTime: GotConn reports how long a reused connection was idle,
// and one idle longer than IdleConnTimeout is dropped for a fresh one.
func TestIdleTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ln := pipenet.Listen()
		servePipe(t, ln, func(c net.Conn, _ *http.Request) bool {
			fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
			return true
		})
		tr := h1.New(&http.Transport{DialContext: ln.DialContext, IdleConnTimeout: 90 * time.Second})
		defer tr.CloseIdleConnections()
		var g gotConns
		for _, wait := range []time.Duration{0, 3 * time.Second, 90 * time.Second, 91 * time.Second} {
			time.Sleep(wait)
			_, err := send(t, g.ctx(t.Context()), tr, http.MethodGet, "http://pipe.invalid/", "")
			require.NoError(t, err)
		}
		require.Equal(t, []bool{false, true, true, false}, g.reused())
		require.Equal(t, 3*time.Second, g.infos[1].IdleTime)
		require.Equal(t, 90*time.Second, g.infos[2].IdleTime)
		require.Equal(t, 2, ln.Dials())
	})
}

// TestContextEnds: a context that ends at each phase of an exchange (in
// the dial, waiting for the first byte, in the body) ends it with the
// context's error, at that instant, as with net/http.
func TestContextEnds(t *testing.T) {
	const limit = 5 * time.Second
	tests := []struct {
		name  string
		hold  time.Duration // before the head
		stall time.Duration // after the first body bytes
		dial  bool          // the dial never completes
	}{
		{name: "dial", dial: true},
		{name: "first byte", hold: time.Minute},
		{name: "body", stall: time.Minute},
	}
	for _, tt := range tests {
		for _, cancel := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/cancel=%v", tt.name, cancel), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					ln := pipenet.Listen()
					servePipe(t, ln, func(c net.Conn, _ *http.Request) bool {
						pause(t, tt.hold)
						fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello")
						pause(t, tt.stall)
						_, _ = io.WriteString(c, "world")
						return true
					})
					dial := ln.DialContext
					if tt.dial {
						dial = func(ctx context.Context, _, _ string) (net.Conn, error) {
							<-ctx.Done()
							return nil, ctx.Err()
						}
					}
					for name, rt := range both(t, func(tr *http.Transport) { tr.DialContext = dial }) {
						ctx, stop := context.WithTimeout(t.Context(), limit)
						if cancel {
							ctx, stop = context.WithCancel(t.Context())
							time.AfterFunc(limit, stop)
						}
						start := time.Now()
						ex, err := send(t, ctx, rt, http.MethodGet, "http://pipe.invalid/", "")
						stop()
						want := context.DeadlineExceeded
						if cancel {
							want = context.Canceled
						}
						if tt.stall > 0 {
							require.NoError(t, err, name)
							require.Equal(t, "hello", ex.Body, name)
							require.Equal(t, want.Error(), ex.Err, name)
						} else {
							require.ErrorIs(t, err, want, name)
						}
						require.Equal(t, limit, time.Since(start), name)
						synctest.Wait()
					}
				})
			})
		}
	}
}

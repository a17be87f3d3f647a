package capacity

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// connCountKey keys the per-connection request counter of idleCloser.
type connCountKey struct{}

// idleCloser answers a short stream, except that the request arriving
// second on each connection finds it closed: the handler reads the
// request and closes the connection without a response byte, as a server
// that closed the kept-alive connection while it was idle behaves
// (deterministic: no timer races the client's next request).
type idleCloser struct {
	stream  http.Handler
	dropped atomic.Int32
	conns   atomic.Int32
	// dropAfter delays the close of a dropped request (fake time).
	dropAfter time.Duration
}

func (h *idleCloser) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := r.Context().Value(connCountKey{}).(*atomic.Int32).Add(1)
	if n == 2 {
		h.dropped.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		time.Sleep(h.dropAfter)
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			_ = conn.Close()
		}
		return
	}
	h.stream.ServeHTTP(w, r)
}

// serveCounting serves h over the in-memory transport with a request
// counter per connection.
func serveCounting(t *testing.T, h *idleCloser) *http.Client {
	ln := newPipeListener()
	srv := &http.Server{Handler: h, ConnContext: func(ctx context.Context, _ net.Conn) context.Context {
		h.conns.Add(1)
		return context.WithValue(ctx, connCountKey{}, new(atomic.Int32))
	}}
	var wg sync.WaitGroup
	wg.Go(func() { _ = srv.Serve(ln) })
	tr := &http.Transport{DialContext: ln.dial, MaxIdleConnsPerHost: 4}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		_ = srv.Close()
		wg.Wait()
	})
	return &http.Client{Transport: tr}
}

// TestRunRetriesStaleKeepAlive: a kept-alive connection the server closed
// while idle is never charged to the server: the request is sent once more
// on a fresh connection with t0 taken again, succeeds, and is recorded in
// phases.retried and connections.retried.
func TestRunRetriesStaleKeepAlive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &idleCloser{stream: usageServer(`"prompt_tokens":400,"completion_tokens":2`)}
		tg := Target{BaseURL: "http://pipe.invalid/v1", Model: "m", MaxModelLen: 8192, HTTPClient: serveCounting(t, h), MetricsURL: "off"} // it counts every connection
		rep, err := Run(t.Context(), tg, Workload{Requests: 4, Concurrency: 1, ContextTokens: 512})
		require.NoError(t, err)
		require.Empty(t, rep.Failures, "no failure charged to the server")
		require.True(t, rep.PerformanceEligible)
		// Every connection's second request finds it closed: requests 1, 2
		// and 3 each meet a closed idle connection and are retried on a
		// fresh one, whose first request they are.
		require.Equal(t, int32(3), h.dropped.Load())
		require.Equal(t, int32(4), h.conns.Load())
		require.Equal(t, 3, rep.AnvilGo.Connections.Retried)
		retried := 0
		for _, d := range rep.AnvilGo.Requests {
			require.NotNil(t, d.Phases)
			if d.Phases.Retried {
				retried++
				require.False(t, d.Phases.Reused, "the retry went out on a fresh connection")
			}
		}
		require.Equal(t, 3, retried)
		require.Equal(t, []bool{false, true, true, true}, []bool{
			rep.AnvilGo.Requests[0].Phases.Retried, rep.AnvilGo.Requests[1].Phases.Retried,
			rep.AnvilGo.Requests[2].Phases.Retried, rep.AnvilGo.Requests[3].Phases.Retried,
		})
	})
}

// TestRunNoRetryOnFreshOrAnswered: a fresh connection closed before the
// response, and a reused one that already sent a response byte, are the
// server's failures and are not retried.
func TestRunNoRetryOnFreshOrAnswered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		closeAll := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				_ = conn.Close()
			}
		})
		rep, err := Run(t.Context(), pipeTarget(t, closeAll), Workload{Requests: 2, Concurrency: 1, ContextTokens: 512})
		require.NoError(t, err)
		require.Len(t, rep.Failures, 2)
		for _, f := range rep.Failures {
			require.Equal(t, artifact.FailureRequestError, f.FailureClass)
			require.Equal(t, ErrorTypeEOF, f.ErrorType)
		}
		require.Zero(t, rep.AnvilGo.Connections.Retried)
	})
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		partial := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1) == 1 {
				usageServer(`"prompt_tokens":400,"completion_tokens":2`).ServeHTTP(w, r)
				return
			}
			_, _ = io.Copy(io.Discard, r.Body)
			conn, buf, err := http.NewResponseController(w).Hijack()
			if err == nil {
				fmt.Fprint(buf, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 1000\r\n\r\ndata: {")
				_ = buf.Flush()
				_ = conn.Close()
			}
		})
		rep, err := Run(t.Context(), pipeTarget(t, partial), Workload{Requests: 2, Concurrency: 1, ContextTokens: 512})
		require.NoError(t, err)
		require.Len(t, rep.Failures, 1)
		require.Equal(t, artifact.FailureStreamValidation, rep.Failures[0].FailureClass)
		require.Zero(t, rep.AnvilGo.Connections.Retried)
	})
}

// TestRetryRestartsStallLimit: the retry after a stale keep-alive
// connection restarts the stall limit with t0, as it restarts the total
// one: a stale connection that took 60 ms to fail, then an answer 60 ms
// after the retry, is within a 100 ms StallTimeout.
func TestRetryRestartsStallLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(60 * time.Millisecond)
			usageServer(`"prompt_tokens":400,"completion_tokens":2`).ServeHTTP(w, r)
		})
		h := &idleCloser{stream: slow, dropAfter: 60 * time.Millisecond}
		tg := Target{BaseURL: "http://pipe.invalid/v1", Model: "m", MaxModelLen: 8192, HTTPClient: serveCounting(t, h), MetricsURL: "off"} // it counts every connection
		rep, err := Run(t.Context(), tg, Workload{Requests: 2, Concurrency: 1, ContextTokens: 512, StallTimeout: 100 * time.Millisecond})
		require.NoError(t, err)
		for _, f := range rep.Failures {
			t.Errorf("request %d: %s %s: %s", f.RequestIndex, f.FailureClass, f.ErrorType, f.ErrorMessage)
		}
		require.Equal(t, 1, rep.AnvilGo.Connections.Retried)
		require.Len(t, rep.RequestTimings, 2)
		require.Equal(t, 60.0, rep.RequestTimings[1].TTFTMS, "TTFT from the retry's t0")
	})
}

// TestStaleWarmedConnectionRetried: a connection the warm-up left in the
// pool that the server has since closed is, for the measured request that
// takes it, a stale keep-alive connection: retried once on a fresh
// connection, a success, never charged to the server.
func TestStaleWarmedConnectionRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &idleCloser{stream: usageServer(`"prompt_tokens":400,"completion_tokens":2`)}
		hc := serveCounting(t, h)
		cl, err := newClient(Target{BaseURL: "http://pipe.invalid/v1", Model: "m"}, Workload{MaxTokens: 8, Timeout: time.Minute}, hc, "")
		require.NoError(t, err)
		require.Equal(t, 1, cl.prewarm(t.Context(), 1, time.Minute))
		ex := &exchange{}
		var bb bodyBuffer
		bb.buf = cl.enc.appendBody(bb.reset(), []byte("p"))
		cl.send(t.Context(), &bb, ex)
		require.Empty(t, ex.class, ex.message)
		require.True(t, ex.retried)
		require.False(t, ex.reused, "the retry went out on a fresh connection")
		require.Equal(t, int32(1), h.dropped.Load())
		require.Equal(t, int32(2), h.conns.Load())
	})
}

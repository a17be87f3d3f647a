package capacity

import (
	"fmt"
	"net"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/pipenet"
	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// TestHeldThenClosedIsNotHidden: a kept-alive connection that takes a
// request whole, holds it 500 ms and closes without an answer is the
// server's failure: the request is not sent again (the server may have
// processed it; 4 POSTs reach the server for 4 requests), its 500 ms are
// its elapsed time, and the run then stops reusing connections, so the
// requests after it dial, each inside its own timings.
func TestHeldThenClosedIsNotHidden(t *testing.T) {
	for _, hold := range []time.Duration{0, 500 * time.Millisecond} {
		t.Run(hold.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ln := pipenet.Listen()
				srv := wiretest.StartRaw(t, ln, func(c net.Conn, n int, _ *http.Request) bool {
					if n == 2 {
						time.Sleep(hold)
						return false // closed without an answer
					}
					wiretest.AnswerStream(c)
					return true
				})
				tg := Target{BaseURL: "http://pipe.invalid/v1", Model: "m", MaxModelLen: 8192, HTTPClient: wiretest.PipeClient(t, ln), MetricsURL: "off"}
				rep, err := Run(t.Context(), tg, Workload{Requests: 4, Concurrency: 1, ContextTokens: 512})
				require.NoError(t, err)
				require.Equal(t, int32(4), srv.Posts.Load(), "no request is sent twice")
				require.Len(t, rep.Failures, 1)
				f := rep.Failures[0]
				require.Equal(t, 1, f.RequestIndex)
				require.Equal(t, artifact.FailureRequestError, f.FailureClass)
				require.Equal(t, client.ErrorTypeEOF, f.ErrorType)
				require.Equal(t, client.MS(hold), f.ElapsedMS, "the wait is the request's")
				require.Contains(t, f.ErrorMessage, "not sent again")
				require.Contains(t, f.ErrorMessage, "no connection is reused")
				c := rep.AnvilGo.Connections
				require.Equal(t, 1, c.KeptAliveClosed)
				require.True(t, c.ReuseDisabled)
				require.Zero(t, c.Retried)
				for _, i := range []int{2, 3} {
					ph := rep.AnvilGo.Requests[i].Phases
					require.False(t, ph.Reused, "request %d dialed inside its timings", i)
					require.False(t, ph.Retried)
				}
				require.Equal(t, int32(3), srv.Conns.Load())
			})
		})
	}
}

// TestNoRetryOnFreshOrAnswered: a fresh connection closed before the
// response, and a reused one that already sent a response byte, are the
// server's failures and are never sent again.
func TestNoRetryOnFreshOrAnswered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ln := pipenet.Listen()
		srv := wiretest.StartRaw(t, ln, func(net.Conn, int, *http.Request) bool { return false })
		srv.CloseOwn.Store(true) // every POST on a fresh connection
		tg := Target{BaseURL: "http://pipe.invalid/v1", Model: "m", MaxModelLen: 8192, HTTPClient: wiretest.PipeClient(t, ln), MetricsURL: "off"}
		rep, err := Run(t.Context(), tg, Workload{Requests: 2, Concurrency: 1, ContextTokens: 512})
		require.NoError(t, err)
		require.Len(t, rep.Failures, 2)
		for _, f := range rep.Failures {
			require.Equal(t, artifact.FailureRequestError, f.FailureClass)
			require.Equal(t, client.ErrorTypeEOF, f.ErrorType)
		}
		require.Zero(t, rep.AnvilGo.Connections.Retried)
		require.Zero(t, rep.AnvilGo.Connections.KeptAliveClosed)
		require.Equal(t, int32(2), srv.Posts.Load())
	})
	synctest.Test(t, func(t *testing.T) {
		ln := pipenet.Listen()
		srv := wiretest.StartRaw(t, ln, func(c net.Conn, n int, _ *http.Request) bool {
			if n == 1 {
				wiretest.AnswerStream(c)
				return true
			}
			fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 1000\r\n\r\ndata: {")
			return false
		})
		tg := Target{BaseURL: "http://pipe.invalid/v1", Model: "m", MaxModelLen: 8192, HTTPClient: wiretest.PipeClient(t, ln), MetricsURL: "off"}
		rep, err := Run(t.Context(), tg, Workload{Requests: 2, Concurrency: 1, ContextTokens: 512})
		require.NoError(t, err)
		require.Len(t, rep.Failures, 1)
		require.Equal(t, artifact.FailureStreamValidation, rep.Failures[0].FailureClass)
		require.Zero(t, rep.AnvilGo.Connections.Retried)
		require.Equal(t, int32(2), srv.Posts.Load())
	})
}

// TestCloseAfterEveryResponseOverTCP runs the capacity protocol against a
// server on a real socket that closes after every streamed answer while
// advertising Keep-Alive, with Run's own transport: the warm-up's answer
// shows the close, so no measured request fails or is sent twice, and
// every measured request after the first dials inside its own timings.
func TestCloseAfterEveryResponseOverTCP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := wiretest.StartRaw(t, ln, func(c net.Conn, _ int, _ *http.Request) bool {
		wiretest.AnswerStream(c)
		return false
	})
	tg := Target{BaseURL: "http://" + ln.Addr().String() + "/v1", Model: "m", MaxModelLen: 8192, MetricsURL: "off"}
	rep, err := Run(t.Context(), tg, Workload{Requests: 4, Concurrency: 1, Warmup: 1, ContextTokens: 512})
	require.NoError(t, err)
	require.Empty(t, rep.Failures)
	require.Equal(t, int32(5), srv.Posts.Load(), "1 warm-up and 4 measured requests, none sent twice")
	c := rep.AnvilGo.Connections
	require.GreaterOrEqual(t, c.KeptAliveClosed, 1)
	require.True(t, c.ReuseDisabled)
	for i := 1; i < 4; i++ {
		ph := rep.AnvilGo.Requests[i].Phases
		require.False(t, ph.Reused, "request %d", i)
		require.NotNil(t, ph.ConnectMS, "request %d dialed inside its timings", i)
	}
}

package capacity

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/pipenet"
)

// rawServer is an HTTP/1.1 server written on a bare net.Listener, so that
// each test decides exactly what happens to a connection after each
// answer. on is called for the n-th POST (from 1) of each connection
// other than Ollama's /api/show, after it was read whole; it answers it
// (answerStream, answerJSON) and reports whether the connection stays
// open. The server answers every GET itself (the window discovery's and
// the connection warm-up's: a model list, 404 for the native discovery
// paths) and POST /api/show (404), keeping the connection. It counts
// every connection, so the runs against it turn the metrics sampler off.
type rawServer struct {
	ln    net.Listener
	on    func(c net.Conn, n int, req *http.Request) (keep bool)
	posts atomic.Int32 // POST requests read whole
	conns atomic.Int32
	// closeOwn closes the connection (Connection: close) after each
	// answer the server gives itself, so that the POSTs after them dial
	// fresh connections.
	closeOwn atomic.Bool
	wg       sync.WaitGroup
}

func startRaw(t *testing.T, ln net.Listener, on func(c net.Conn, n int, req *http.Request) bool) *rawServer {
	s := &rawServer{ln: ln, on: on}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.conns.Add(1)
			s.wg.Go(func() { s.serve(c) })
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		s.wg.Wait()
	})
	return s
}

func (s *rawServer) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for n := 1; ; {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			return
		}
		closing, own := "", true
		if s.closeOwn.Load() {
			closing = "Connection: close\r\n"
		}
		switch {
		case req.Method == http.MethodGet && req.URL.Path == "/v1/models":
			body := `{"data":[{"id":"m"}]}`
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n%s", closing, len(body), body)
		case req.Method == http.MethodGet || req.URL.Path == ollamaShowPath:
			fmt.Fprintf(c, "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\n%sContent-Length: 9\r\n\r\nnot found", closing)
		default:
			own = false
			s.posts.Add(1)
			if !s.on(c, n, req) {
				return
			}
			n++
		}
		if req.Close || (own && closing != "") {
			return
		}
	}
}

// answerStream writes a short streamed answer that keeps the connection
// alive (llama.cpp's headers: chunked, Keep-Alive advertised).
func answerStream(c net.Conn) {
	body := "data: {\"choices\":[{\"delta\":{\"content\":\"hello\"}}]}\n\n" +
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":400,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n"
	fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nKeep-Alive: timeout=5, max=100\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(body), body)
}

// answerJSON writes a small JSON answer that keeps the connection alive.
func answerJSON(c net.Conn, body string) {
	fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nKeep-Alive: timeout=5, max=100\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
}

// pipeClient is a client of ln over the in-memory transport.
func pipeClient(t *testing.T, ln *pipenet.Listener) *http.Client {
	tr := &http.Transport{DialContext: ln.DialContext, MaxIdleConnsPerHost: 4}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

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
				srv := startRaw(t, ln, func(c net.Conn, n int, _ *http.Request) bool {
					if n == 2 {
						time.Sleep(hold)
						return false // closed without an answer
					}
					answerStream(c)
					return true
				})
				tg := Target{BaseURL: "http://pipe.invalid/v1", Model: "m", MaxModelLen: 8192, HTTPClient: pipeClient(t, ln), MetricsURL: "off"}
				rep, err := Run(t.Context(), tg, Workload{Requests: 4, Concurrency: 1, ContextTokens: 512})
				require.NoError(t, err)
				require.Equal(t, int32(4), srv.posts.Load(), "no request is sent twice")
				require.Len(t, rep.Failures, 1)
				f := rep.Failures[0]
				require.Equal(t, 1, f.RequestIndex)
				require.Equal(t, artifact.FailureRequestError, f.FailureClass)
				require.Equal(t, errorTypeEOF, f.ErrorType)
				require.Equal(t, monoMS(hold), f.ElapsedMS, "the wait is the request's")
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
				require.Equal(t, int32(3), srv.conns.Load())
			})
		})
	}
}

// TestCloseAfterEveryResponse: a server that closes the connection after
// every streamed answer although it advertised Keep-Alive (llama.cpp's
// llama-server) is detected by the run's own connections, reported, and
// then served without reuse. Nothing fails, nothing is sent twice, and
// the tokenizer's POST right after a streamed answer gets its answer too.
func TestCloseAfterEveryResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ln := pipenet.Listen()
		srv := startRaw(t, ln, func(c net.Conn, _ int, req *http.Request) bool {
			if req.URL.Path == "/tokenize" {
				answerJSON(c, `{"tokens":[1,2,3]}`)
				return true
			}
			answerStream(c)
			return false // as llama-server does after a streamed answer
		})
		tr := &http.Transport{DialContext: ln.DialContext, MaxIdleConnsPerHost: 4}
		defer tr.CloseIdleConnections()
		hc, rule := withConnectionRule(&http.Client{Transport: tr}, tr)
		cl, err := newClient(Target{BaseURL: "http://pipe.invalid/v1", Model: "m"}, Workload{MaxTokens: 8, Timeout: time.Minute}, hc, "")
		require.NoError(t, err)
		send := func() *exchange {
			ex := &exchange{}
			var bb bodyBuffer
			bb.buf = cl.enc.appendBody(bb.reset(), []byte("p"))
			cl.send(t.Context(), &bb, ex)
			require.Empty(t, ex.class, ex.message)
			return ex
		}
		send()
		synctest.Wait() // the server's close has reached the client
		require.Equal(t, 1, rule.KeptAliveClosed())
		require.True(t, rule.ReuseDisabled())

		for range 3 {
			ex := send()
			require.False(t, ex.reused, "each request dials inside its timings")
			require.False(t, ex.retried)
		}
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://pipe.invalid/tokenize", strings.NewReader(`{"content":"x"}`))
		require.NoError(t, err)
		resp, err := hc.Do(req)
		require.NoError(t, err, "POST /tokenize right after a streamed answer")
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		require.Equal(t, `{"tokens":[1,2,3]}`, string(b))
		require.Equal(t, int32(5), srv.posts.Load())
		require.Equal(t, 1, rule.KeptAliveClosed(), "counted once")
	})
}

// TestUnwrittenRequestKeepsItsT0: a request whose kept-alive connection
// was found closed before anything of it was written is sent again on a
// fresh connection, with the first attempt's t0: the 30 ms the server
// took to close the first connection under it are inside its TTFT, and
// both attempts are in its phases.
func TestUnwrittenRequestKeepsItsT0(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ln := pipenet.Listen()
		srv := startRaw(t, ln, func(c net.Conn, n int, _ *http.Request) bool {
			answerStream(c)
			return true
		})
		tr := &http.Transport{DialContext: ln.DialContext, MaxIdleConnsPerHost: 4}
		defer tr.CloseIdleConnections()
		hc, rule := withConnectionRule(&http.Client{Transport: tr}, nil)
		cl, err := newClient(Target{BaseURL: "http://pipe.invalid/v1", Model: "m"}, Workload{MaxTokens: 8, Timeout: time.Minute}, hc, "")
		require.NoError(t, err)
		// One kept-alive connection in the pool, whose writes fail after
		// 30 ms as if the server had closed it: nothing is written.
		stale := &failingWrites{delay: 30 * time.Millisecond}
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := ln.DialContext(ctx, network, addr)
			if err != nil || stale.used.Swap(true) {
				return c, err
			}
			stale.Conn = c
			return stale, nil
		}
		var bb bodyBuffer
		first := &exchange{}
		bb.buf = cl.enc.appendBody(bb.reset(), []byte("p"))
		cl.send(t.Context(), &bb, first)
		require.Empty(t, first.class, first.message)
		stale.armed.Store(true)

		ex := &exchange{}
		bb.buf = cl.enc.appendBody(bb.reset(), []byte("p"))
		cl.send(t.Context(), &bb, ex)
		require.Empty(t, ex.class, ex.message)
		require.True(t, ex.retried)
		require.NotNil(t, ex.failedAttempt)
		require.True(t, ex.failedAttempt.reused)
		require.Nil(t, ex.failedAttempt.wroteMS, "nothing of the first attempt was written")
		require.Equal(t, 30.0, ex.failedAttempt.endedMS)
		require.False(t, ex.reused)
		require.Equal(t, 30.0, monoMS(ex.stream.firstContent.Sub(ex.start)), "TTFT from the first attempt's t0")
		require.Equal(t, int32(2), srv.posts.Load(), "the failed attempt never reached the server")
		require.Equal(t, 1, rule.KeptAliveClosed())
	})
}

// failingWrites is a connection whose writes, once armed, fail after
// delay without writing anything.
type failingWrites struct {
	net.Conn
	delay time.Duration
	used  atomic.Bool
	armed atomic.Bool
}

func (c *failingWrites) Write(p []byte) (int, error) {
	if c.armed.Load() {
		time.Sleep(c.delay)
		return 0, errPeerClosed
	}
	return c.Conn.Write(p)
}

// TestNoRetryOnFreshOrAnswered: a fresh connection closed before the
// response, and a reused one that already sent a response byte, are the
// server's failures and are never sent again.
func TestNoRetryOnFreshOrAnswered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ln := pipenet.Listen()
		srv := startRaw(t, ln, func(net.Conn, int, *http.Request) bool { return false })
		srv.closeOwn.Store(true) // every POST on a fresh connection
		tg := Target{BaseURL: "http://pipe.invalid/v1", Model: "m", MaxModelLen: 8192, HTTPClient: pipeClient(t, ln), MetricsURL: "off"}
		rep, err := Run(t.Context(), tg, Workload{Requests: 2, Concurrency: 1, ContextTokens: 512})
		require.NoError(t, err)
		require.Len(t, rep.Failures, 2)
		for _, f := range rep.Failures {
			require.Equal(t, artifact.FailureRequestError, f.FailureClass)
			require.Equal(t, errorTypeEOF, f.ErrorType)
		}
		require.Zero(t, rep.AnvilGo.Connections.Retried)
		require.Zero(t, rep.AnvilGo.Connections.KeptAliveClosed)
		require.Equal(t, int32(2), srv.posts.Load())
	})
	synctest.Test(t, func(t *testing.T) {
		ln := pipenet.Listen()
		srv := startRaw(t, ln, func(c net.Conn, n int, _ *http.Request) bool {
			if n == 1 {
				answerStream(c)
				return true
			}
			fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 1000\r\n\r\ndata: {")
			return false
		})
		tg := Target{BaseURL: "http://pipe.invalid/v1", Model: "m", MaxModelLen: 8192, HTTPClient: pipeClient(t, ln), MetricsURL: "off"}
		rep, err := Run(t.Context(), tg, Workload{Requests: 2, Concurrency: 1, ContextTokens: 512})
		require.NoError(t, err)
		require.Len(t, rep.Failures, 1)
		require.Equal(t, artifact.FailureStreamValidation, rep.Failures[0].FailureClass)
		require.Zero(t, rep.AnvilGo.Connections.Retried)
		require.Equal(t, int32(2), srv.posts.Load())
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
	srv := startRaw(t, ln, func(c net.Conn, _ int, _ *http.Request) bool {
		answerStream(c)
		return false
	})
	tg := Target{BaseURL: "http://" + ln.Addr().String() + "/v1", Model: "m", MaxModelLen: 8192, MetricsURL: "off"}
	rep, err := Run(t.Context(), tg, Workload{Requests: 4, Concurrency: 1, Warmup: 1, ContextTokens: 512})
	require.NoError(t, err)
	require.Empty(t, rep.Failures)
	require.Equal(t, int32(5), srv.posts.Load(), "1 warm-up and 4 measured requests, none sent twice")
	c := rep.AnvilGo.Connections
	require.GreaterOrEqual(t, c.KeptAliveClosed, 1)
	require.True(t, c.ReuseDisabled)
	for i := 1; i < 4; i++ {
		ph := rep.AnvilGo.Requests[i].Phases
		require.False(t, ph.Reused, "request %d", i)
		require.NotNil(t, ph.ConnectMS, "request %d dialed inside its timings", i)
	}
}

// TestUnmeasuredRequestSentAgain: a request that is not measured (here
// the tokenizer's POST) that met a kept-alive connection closed under it
// without an answer is sent again on a fresh connection even though it was
// completely written: it changes no count. A measured request in the same
// place is not (TestHeldThenClosedIsNotHidden).
func TestUnmeasuredRequestSentAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ln := pipenet.Listen()
		srv := startRaw(t, ln, func(c net.Conn, n int, _ *http.Request) bool {
			if n == 2 {
				return false // read whole, closed without an answer
			}
			answerJSON(c, `{"tokens":[7]}`)
			return true
		})
		hc, rule := withConnectionRule(pipeClient(t, ln), nil)
		post := func() (string, error) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://pipe.invalid/tokenize", strings.NewReader(`{"content":"x"}`))
			require.NoError(t, err)
			resp, err := hc.Do(req)
			if err != nil {
				return "", err
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			return string(b), err
		}
		for range 2 {
			got, err := post()
			require.NoError(t, err)
			require.Equal(t, `{"tokens":[7]}`, got)
		}
		require.Equal(t, int32(3), srv.posts.Load(), "the second POST reached the server twice")
		require.Equal(t, int32(2), srv.conns.Load())
		require.Equal(t, 1, rule.KeptAliveClosed())
		require.True(t, rule.ReuseDisabled())
	})
}

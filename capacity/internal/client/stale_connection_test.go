package client

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/pipenet"
	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// TestCloseAfterEveryResponse: a server that closes the connection after
// every streamed answer although it advertised Keep-Alive (llama.cpp's
// llama-server) is detected by the run's own connections, reported, and
// then served without reuse. Nothing fails, nothing is sent twice, and
// the tokenizer's POST right after a streamed answer gets its answer too.
func TestCloseAfterEveryResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ln := pipenet.Listen()
		srv := wiretest.StartRaw(t, ln, func(c net.Conn, _ int, req *http.Request) bool {
			if req.URL.Path == "/tokenize" {
				wiretest.AnswerJSON(c, `{"tokens":[1,2,3]}`)
				return true
			}
			wiretest.AnswerStream(c)
			return false // as llama-server does after a streamed answer
		})
		tr := &http.Transport{DialContext: ln.DialContext, MaxIdleConnsPerHost: 4}
		defer tr.CloseIdleConnections()
		hc, rule := WithConnectionRule(&http.Client{Transport: tr}, tr)
		cl := testClient(t, Config{HTTPClient: hc, Checks: Checks{MaxTokens: 8}})
		send := func() *Exchange {
			ex := &Exchange{}
			cl.Send(t.Context(), promptBody(t, 8), ex)
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
		require.Equal(t, int32(5), srv.Posts.Load())
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
		srv := wiretest.StartRaw(t, ln, func(c net.Conn, n int, _ *http.Request) bool {
			wiretest.AnswerStream(c)
			return true
		})
		tr := &http.Transport{DialContext: ln.DialContext, MaxIdleConnsPerHost: 4}
		defer tr.CloseIdleConnections()
		hc, rule := WithConnectionRule(&http.Client{Transport: tr}, nil)
		cl := testClient(t, Config{HTTPClient: hc, Checks: Checks{MaxTokens: 8}})
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
		bb := promptBody(t, 8)
		first := &Exchange{}
		cl.Send(t.Context(), bb, first)
		require.Empty(t, first.class, first.message)
		stale.armed.Store(true)

		ex := &Exchange{}
		cl.Send(t.Context(), bb, ex)
		require.Empty(t, ex.class, ex.message)
		require.True(t, ex.retried)
		require.NotNil(t, ex.failedAttempt)
		require.True(t, ex.failedAttempt.reused)
		require.Nil(t, ex.failedAttempt.wroteMS, "nothing of the first attempt was written")
		require.Equal(t, 30.0, ex.failedAttempt.endedMS)
		require.False(t, ex.reused)
		require.Equal(t, 30.0, MS(ex.stream.firstContent.Sub(ex.start)), "TTFT from the first attempt's t0")
		require.Equal(t, int32(2), srv.Posts.Load(), "the failed attempt never reached the server")
		require.Equal(t, 1, rule.KeptAliveClosed())
	})
}

// TestUnmeasuredRequestSentAgain: a request that is not measured (here
// the tokenizer's POST) that met a kept-alive connection closed under it
// without an answer is sent again on a fresh connection even though it was
// completely written: it changes no count. A measured request in the same
// place is not (TestHeldThenClosedIsNotHidden).
func TestUnmeasuredRequestSentAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ln := pipenet.Listen()
		srv := wiretest.StartRaw(t, ln, func(c net.Conn, n int, _ *http.Request) bool {
			if n == 2 {
				return false // read whole, closed without an answer
			}
			wiretest.AnswerJSON(c, `{"tokens":[7]}`)
			return true
		})
		hc, rule := WithConnectionRule(wiretest.PipeClient(t, ln), nil)
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
		require.Equal(t, int32(3), srv.Posts.Load(), "the second POST reached the server twice")
		require.Equal(t, int32(2), srv.Conns.Load())
		require.Equal(t, 1, rule.KeptAliveClosed())
		require.True(t, rule.ReuseDisabled())
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

package h1_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/h1"
)

// TestKeepAliveReuse: the second request to a plain httptest server takes
// the first one's connection from the pool, reported as reused and idle.
func TestKeepAliveReuse(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s", r.Method, b)
	}))
	defer srv.Close()
	tr := h1.New(&http.Transport{})
	defer tr.CloseIdleConnections()
	var g gotConns
	for _, body := range []string{"one", "two"} {
		ex, err := send(t, g.ctx(t.Context()), tr, http.MethodPost, srv.URL, body)
		require.NoError(t, err)
		require.Equal(t, "POST "+body, ex.Body)
	}
	require.Len(t, g.infos, 2)
	require.Equal(t, []bool{false, true}, g.reused())
	require.Same(t, g.infos[0].Conn, g.infos[1].Conn)
	require.True(t, g.infos[1].WasIdle)
	require.False(t, g.infos[0].WasIdle)
}

// TestFramingAsNetHTTP: each answer's framing (length, chunked, to the
// close; HTTP/1.0; a close asked for; a 100 Continue before the answer)
// decodes as net/http decodes it, and the next request reuses the
// connection exactly when net/http's does.
func TestFramingAsNetHTTP(t *testing.T) {
	tests := []struct {
		name   string
		answer string // the server closes after it when it ends with "\x00close"
		reuse  bool
	}{
		{"content-length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", true},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2\r\nlo\r\n0\r\n\r\n", true},
		{"chunked with trailer", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n5\r\nhello\r\n0\r\nX-T: 1\r\n\r\n", true},
		{"to the close", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nhello\x00close", false},
		// The server keeps these open: closing them is the client's part.
		{"connection close", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 5\r\n\r\nhello", false},
		{"HTTP/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello", false},
		{"HTTP/1.0 keep-alive", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 5\r\n\r\nhello", true},
		{"100 Continue first", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", true},
		{"103 Early Hints first", "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok", true},
		{"no content", "HTTP/1.1 204 No Content\r\n\r\n", true},
		{"no content, close", "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n", false},
		{"empty length", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", true},
		{"error status", "HTTP/1.1 413 Request Entity Too Large\r\nContent-Length: 3\r\n\r\nbig", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			answer, closes := strings.CutSuffix(tt.answer, "\x00close")
			srv := startScript(t, func(c net.Conn, _ *bufio.Reader, req *http.Request, _ int) bool {
				drained(req)
				_, _ = io.WriteString(c, answer)
				return !closes
			})
			got := map[string][]exchange{}
			for name, rt := range both(t, nil) {
				before := srv.Conns.Load()
				for range 2 {
					ex, err := send(t, t.Context(), rt, http.MethodPost, srv.URL, "prompt")
					require.NoError(t, err, name)
					got[name] = append(got[name], ex)
				}
				reused := srv.Conns.Load()-before == 1
				require.Equal(t, tt.reuse, reused, "%s: reuse", name)
			}
			if diff := cmp.Diff(got["net/http"], got["h1"]); diff != "" {
				t.Errorf("h1 differs from net/http (-net/http +h1):\n%s", diff)
			}
		})
	}
}

// TestGzipAsNetHTTP: a request naming no Accept-Encoding asks for gzip
// and gets it decoded, as with net/http; one naming identity does not.
func TestGzipAsNetHTTP(t *testing.T) {
	const gz = "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff\xcaH\xcd\xc9\xc9\x07\x04\x00\x00\xff\xff\x86\xa6\x106\x05\x00\x00\x00"
	var asked atomic.Value
	srv := startScript(t, func(c net.Conn, _ *bufio.Reader, req *http.Request, _ int) bool {
		drained(req)
		asked.Store(req.Header.Get("Accept-Encoding"))
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s", len(gz), gz)
		return true
	})
	for name, rt := range both(t, nil) {
		ex, err := send(t, t.Context(), rt, http.MethodGet, srv.URL, "")
		require.NoError(t, err)
		require.Equal(t, "gzip", asked.Load(), name)
		require.Equal(t, exchange{Status: 200, Proto: "HTTP/1.1", ContentLength: -1, Header: http.Header{}, Body: "hello"}, ex, name)
	}
}

// TestBodyClosedEarlyClosesConn: a body closed before its end closes its
// connection; the next request dials.
func TestBodyClosedEarlyClosesConn(t *testing.T) {
	ended := make(chan struct{})
	srv := startScript(t, func(c net.Conn, br *bufio.Reader, req *http.Request, n int) bool {
		drained(req)
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello")
		if _, err := br.ReadByte(); err == io.EOF {
			close(ended) // the client closed the connection
		}
		return false
	})
	tr := h1.New(&http.Transport{})
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	resp, err := tr.RoundTrip(req)
	require.NoError(t, err)
	b := make([]byte, 5)
	_, err = io.ReadFull(resp.Body, b)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	<-ended
	_, err = resp.Body.Read(b)
	require.EqualError(t, err, "http: read on closed response body")
}

// TestServerClosedIdleConn: an idle connection the server closed is
// dropped before it is used: the request dials, is written once, and its
// trace shows one fresh connection.
func TestServerClosedIdleConn(t *testing.T) {
	closed := make(chan struct{}, 1)
	srv := startScript(t, func(c net.Conn, _ *bufio.Reader, req *http.Request, n int) bool {
		drained(req)
		fmt.Fprint(c, "HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5\r\nContent-Length: 2\r\n\r\nok")
		_ = c.Close()
		closed <- struct{}{}
		return false
	})
	tr := h1.New(&http.Transport{})
	defer tr.CloseIdleConnections()
	_, err := send(t, t.Context(), tr, http.MethodPost, srv.URL, "one")
	require.NoError(t, err)
	<-closed
	var g gotConns
	ex, err := send(t, g.ctx(t.Context()), tr, http.MethodPost, srv.URL, "two")
	require.NoError(t, err)
	require.Equal(t, "ok", ex.Body)
	require.Equal(t, []bool{false}, g.reused())
	require.Equal(t, int32(2), srv.Requests.Load())
	require.Equal(t, int32(2), srv.Conns.Load())
}

// refusingConn is a connection whose writes, once armed, fail with
// nothing written, as a kept-alive connection the server closed does.
type refusingConn struct {
	net.Conn
	armed *atomic.Bool
}

func (c *refusingConn) Write(p []byte) (int, error) {
	if c.armed.Swap(false) {
		return 0, syscall.EPIPE
	}
	return c.Conn.Write(p)
}

// TestNothingWrittenSentAgain: a request whose reused connection fails
// its first write with nothing written is sent on another connection
// (GotConn twice, the second fresh); one whose reused connection closed
// after it was written whole is not sent again (a POST), as net/http.
func TestNothingWrittenSentAgain(t *testing.T) {
	srv := startScript(t, func(c net.Conn, _ *bufio.Reader, req *http.Request, n int) bool {
		drained(req)
		fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		return true
	})
	var armed atomic.Bool
	tr := h1.New(&http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &refusingConn{Conn: c, armed: &armed}, nil
	}})
	defer tr.CloseIdleConnections()
	_, err := send(t, t.Context(), tr, http.MethodPost, srv.URL, "one")
	require.NoError(t, err)
	armed.Store(true)
	var g gotConns
	ex, err := send(t, g.ctx(t.Context()), tr, http.MethodPost, srv.URL, "two")
	require.NoError(t, err)
	require.Equal(t, "ok", ex.Body)
	require.Equal(t, []bool{true, false}, g.reused())
	require.Equal(t, int32(2), srv.Requests.Load(), "the failed attempt wrote nothing")
}

// TestClosedAfterWrite: a kept-alive connection the server closes after
// reading a request whole, without answering, fails a POST (not sent
// again) and sends a GET again, as net/http does.
func TestClosedAfterWrite(t *testing.T) {
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		t.Run(method, func(t *testing.T) {
			srv := startScript(t, func(c net.Conn, _ *bufio.Reader, req *http.Request, n int) bool {
				drained(req)
				if n == 2 {
					return false
				}
				fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				return true
			})
			for name, rt := range both(t, nil) {
				before := srv.Requests.Load()
				_, err := send(t, t.Context(), rt, method, srv.URL, "")
				require.NoError(t, err)
				var g gotConns
				_, err = send(t, g.ctx(t.Context()), rt, method, srv.URL, "")
				sent := srv.Requests.Load() - before
				if method == http.MethodPost {
					require.ErrorIs(t, err, io.EOF, name)
					require.Equal(t, int32(2), sent, name)
					require.Equal(t, []bool{true}, g.reused(), name)
				} else {
					require.NoError(t, err, name)
					require.Equal(t, int32(3), sent, name)
					require.Equal(t, []bool{true, false}, g.reused(), name)
				}
			}
		})
	}
}

// TestAnswerBeforeWriteFailed: a server that answers before reading a
// large body and closes gets its answer to the caller, not the write
// error.
func TestAnswerBeforeWriteFailed(t *testing.T) {
	srv := startScript(t, func(c net.Conn, _ *bufio.Reader, _ *http.Request, _ int) bool {
		fmt.Fprint(c, "HTTP/1.1 413 Request Entity Too Large\r\nConnection: close\r\nContent-Length: 3\r\n\r\nbig")
		return false
	})
	// The connection takes the head and 1 KiB of the body, then breaks.
	tr := h1.New(&http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &breakingConn{Conn: c, left: 1 << 10}, nil
	}})
	defer tr.CloseIdleConnections()
	ex, err := send(t, t.Context(), tr, http.MethodPost, srv.URL, strings.Repeat("x", 1<<20))
	require.NoError(t, err)
	require.Equal(t, http.StatusRequestEntityTooLarge, ex.Status)
	require.Equal(t, "big", ex.Body)
}

// breakingConn writes left bytes, then fails every write.
type breakingConn struct {
	net.Conn
	left int
}

func (c *breakingConn) Write(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, syscall.EPIPE
	}
	n, err := c.Conn.Write(p[:min(len(p), c.left)])
	c.left -= n
	if err == nil && n < len(p) {
		err = syscall.EPIPE
	}
	return n, err
}

// TestFallback: what h1 does not serve goes to its fallback unchanged: a
// URL its proxy takes, a request expecting 100-continue, any request
// while the fallback disables keep-alives, https.
func TestFallback(t *testing.T) {
	var uris []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		uris = append(uris, r.RequestURI)
		w.Header().Set("X-Proto", r.Proto)
		_, _ = io.WriteString(w, "ok")
	}))
	defer ts.Close()
	fb := &http.Transport{Proxy: func(r *http.Request) (*url.URL, error) {
		if r.URL.Path == "/proxied" {
			return url.Parse(ts.URL)
		}
		return nil, nil
	}}
	tr := h1.New(fb)
	defer tr.CloseIdleConnections()
	var g gotConns
	post := func(path string, header http.Header) {
		t.Helper()
		req, err := http.NewRequestWithContext(g.ctx(t.Context()), http.MethodPost, ts.URL+path, strings.NewReader("x"))
		require.NoError(t, err)
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	post("/direct", nil)
	post("/proxied", nil)
	require.Equal(t, []string{"/direct", ts.URL + "/proxied"}, uris, "the proxied request went through the fallback's proxy")
	post("/direct", http.Header{"Expect": {"100-continue"}})
	fb.DisableKeepAlives = true
	post("/direct", nil)
	// h1's connection of the first request was idle all along: the
	// fallback dialed its own for the others.
	require.Equal(t, []bool{false, false, false, false}, g.reused())
	fb.DisableKeepAlives = false
	post("/direct", nil)
	require.Equal(t, []bool{false, false, false, false, true}, g.reused(), "h1's idle connection")

	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://"+ts.Listener.Addr().String(), nil)
	require.NoError(t, err)
	_, err = tr.RoundTrip(req)
	require.ErrorContains(t, err, "tls:", "https is the fallback's, which speaks TLS")
}

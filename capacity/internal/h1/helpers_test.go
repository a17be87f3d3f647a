package h1_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/h1"
)

// scriptServer is an HTTP/1.1 server on a real loopback socket whose
// script answers each request: it gets the connection, its reader (the
// request's head read, its body not) and the request's index on the
// connection (from 1), and reports whether the connection stays open.
type scriptServer struct {
	URL      string
	Conns    atomic.Int32
	Requests atomic.Int32
	ln       net.Listener
	wg       sync.WaitGroup
}

func startScript(t *testing.T, script func(c net.Conn, br *bufio.Reader, req *http.Request, n int) bool) *scriptServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &scriptServer{URL: "http://" + ln.Addr().String(), ln: ln}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.Conns.Add(1)
			s.wg.Go(func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for n := 1; ; n++ {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					s.Requests.Add(1)
					if !script(c, br, req, n) {
						return
					}
				}
			})
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		s.wg.Wait()
	})
	return s
}

// drained reads the request's body whole.
func drained(req *http.Request) *http.Request {
	_, _ = io.Copy(io.Discard, req.Body)
	return req
}

// both returns net/http's transport and an h1 Transport over a fallback
// like it, each closed at cleanup.
func both(t *testing.T, setup func(*http.Transport)) map[string]http.RoundTripper {
	t.Helper()
	std, fb := &http.Transport{MaxIdleConnsPerHost: 4}, &http.Transport{MaxIdleConnsPerHost: 4}
	if setup != nil {
		setup(std)
		setup(fb)
	}
	h := h1.New(fb)
	t.Cleanup(std.CloseIdleConnections)
	t.Cleanup(h.CloseIdleConnections)
	return map[string]http.RoundTripper{"net/http": std, "h1": h}
}

// gotConns records the GotConn calls of the requests whose context it
// traces.
type gotConns struct {
	mu    sync.Mutex
	infos []httptrace.GotConnInfo
}

func (g *gotConns) ctx(ctx context.Context) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		g.mu.Lock()
		g.infos = append(g.infos, info)
		g.mu.Unlock()
	}})
}

func (g *gotConns) reused() []bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	var r []bool
	for _, i := range g.infos {
		r = append(r, i.Reused)
	}
	return r
}

// exchange is what a test compares of one request's outcome.
type exchange struct {
	Status           int
	Proto            string
	Close            bool
	ContentLength    int64
	TransferEncoding []string
	Header           http.Header
	Body             string
	Err              string // the body's read error, "" at its end
}

// send sends a request of method with body (none when "") to url over rt
// and reads its answer whole.
func send(t *testing.T, ctx context.Context, rt http.RoundTripper, method, url, body string) (exchange, error) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	require.NoError(t, err)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return exchange{}, err
	}
	defer resp.Body.Close()
	b, rerr := io.ReadAll(resp.Body)
	ex := exchange{Status: resp.StatusCode, Proto: resp.Proto, Close: resp.Close, ContentLength: resp.ContentLength,
		TransferEncoding: resp.TransferEncoding, Header: resp.Header, Body: string(b)}
	if rerr != nil {
		ex.Err = rerr.Error()
	}
	return ex, nil
}

package client

import (
	"context"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"time"
)

// PrewarmLimit bounds the whole connection warm-up: a server that does not
// answer GET /models within it leaves the connections it has not opened to
// the measured requests (which then record their connect time).
const PrewarmLimit = 10 * time.Second

// maxPrewarmDrain bounds the bytes of each warm-up answer read so that its
// connection returns to the keep-alive pool.
const maxPrewarmDrain = 64 << 10

// Prewarm makes the client's keep-alive pool hold n live connections before
// the clock starts (capacity/PROTOCOL.md#connections): it sends n GET
// {BaseURL}/models at once, the cheapest request of the protocol, and
// holds every answer unread until all have arrived (or failed, or the
// limit passed), so that each request really had a connection of its own;
// then each answer is read to its end (bounded by BodyEndGrace) and its
// connection goes back to the pool, dialed, past TLS and, for HTTP/2, with
// its settings exchanged. It returns the number of distinct connections
// that delivered an answer while all were held: the live connections the
// measured phase starts with (an HTTP/2 server multiplexes them all on
// one). The answers' statuses do not matter: any answer that keeps its
// connection open proves it.
func (c *Client) Prewarm(ctx context.Context, n int, limit time.Duration) int {
	if n <= 0 {
		return 0
	}
	if r := c.Rule(); r != nil && r.ReuseDisabled() {
		return 0 // the server closes kept-alive connections: nothing to keep warm
	}
	// The limit ends the requests still waiting for an answer, never the
	// reading of an answer: a request's context ending before its body was
	// read to the end would close the connection it warmed.
	limitCtx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var (
		mu    sync.Mutex
		conns = make(map[net.Conn]struct{}, n)
		held  sync.WaitGroup // answers arrived (or failed)
		all   = make(chan struct{})
		wg    sync.WaitGroup
	)
	held.Add(n)
	go func() {
		held.Wait()
		close(all)
	}()
	for range n {
		wg.Go(func() {
			reqCtx, reqCancel := context.WithCancel(ctx)
			defer reqCancel()
			stopLimit := context.AfterFunc(limitCtx, reqCancel)
			var conn net.Conn // guarded by mu: the transport may call GotConn on its own goroutine
			trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
				mu.Lock()
				conn = info.Conn
				mu.Unlock()
			}}
			req, err := c.NewRequest(httptrace.WithClientTrace(reqCtx, trace), http.MethodGet, c.modelsURL, nil)
			if err != nil {
				held.Done()
				return
			}
			resp, err := c.hc.Do(req)
			// An answer that came before the limit is read whatever the
			// limit does from now on; one the limit already cancelled has
			// lost its connection. An answer that closes its connection
			// (Connection: close, HTTP/1.0) warmed nothing.
			inTime := stopLimit()
			mu.Lock()
			if err == nil && inTime && conn != nil && !resp.Close {
				conns[conn] = struct{}{}
			}
			mu.Unlock()
			held.Done()
			if err != nil {
				return
			}
			defer resp.Body.Close()
			select {
			case <-all:
			case <-limitCtx.Done():
			}
			// Read to the end so the connection returns to the pool; a body
			// that does not end within BodyEndGrace is closed (and its
			// connection with it).
			grace := time.AfterFunc(BodyEndGrace, func() { _ = resp.Body.Close() })
			discard(resp.Body, maxPrewarmDrain)
			grace.Stop()
		})
	}
	wg.Wait()
	return len(conns)
}

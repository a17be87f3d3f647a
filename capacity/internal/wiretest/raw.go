package wiretest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/anvilbench/anvil/capacity/internal/pipenet"
)

// A RawServer is an HTTP/1.1 server written on a bare net.Listener, so
// that each test decides exactly what happens to a connection after each
// answer. Its on func is called for the n-th POST (from 1) of each
// connection other than Ollama's /api/show, after it was read whole; it
// answers it (AnswerStream, AnswerJSON) and reports whether the connection
// stays open. The server answers every GET itself (the window discovery's
// and the connection warm-up's: a model list, 404 for the native
// discovery paths) and POST /api/show (404), keeping the connection. It
// counts every connection, so the runs against it turn the metrics
// sampler off.
type RawServer struct {
	ln    net.Listener
	on    func(c net.Conn, n int, req *http.Request) (keep bool)
	Posts atomic.Int32 // POST requests read whole
	Conns atomic.Int32
	// CloseOwn closes the connection (Connection: close) after each
	// answer the server gives itself, so that the POSTs after them dial
	// fresh connections.
	CloseOwn atomic.Bool
	wg       sync.WaitGroup
}

// StartRaw serves ln with on until the test ends.
func StartRaw(t testing.TB, ln net.Listener, on func(c net.Conn, n int, req *http.Request) bool) *RawServer {
	s := &RawServer{ln: ln, on: on}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.Conns.Add(1)
			s.wg.Go(func() { s.serve(c) })
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		s.wg.Wait()
	})
	return s
}

func (s *RawServer) serve(c net.Conn) {
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
		if s.CloseOwn.Load() {
			closing = "Connection: close\r\n"
		}
		switch {
		case req.Method == http.MethodGet && req.URL.Path == "/v1/models":
			body := `{"data":[{"id":"m"}]}`
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n%s", closing, len(body), body)
		case req.Method == http.MethodGet || req.URL.Path == "/api/show":
			fmt.Fprintf(c, "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\n%sContent-Length: 9\r\n\r\nnot found", closing)
		default:
			own = false
			s.Posts.Add(1)
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

// AnswerStream writes a short streamed answer that keeps the connection
// alive (llama.cpp's headers: chunked, Keep-Alive advertised).
func AnswerStream(c net.Conn) {
	body := "data: {\"choices\":[{\"delta\":{\"content\":\"hello\"}}]}\n\n" +
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":400,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n"
	fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nKeep-Alive: timeout=5, max=100\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(body), body)
}

// AnswerJSON writes a small JSON answer that keeps the connection alive.
func AnswerJSON(c net.Conn, body string) {
	fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nKeep-Alive: timeout=5, max=100\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
}

// PipeClient is a client of ln over the in-memory transport.
func PipeClient(t testing.TB, ln *pipenet.Listener) *http.Client {
	tr := &http.Transport{DialContext: ln.DialContext, MaxIdleConnsPerHost: 4}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

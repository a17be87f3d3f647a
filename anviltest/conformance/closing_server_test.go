package conformance

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
)

// closingServer is a server on a real socket that answers like llama.cpp's
// llama-server: every answer advertises Connection: keep-alive, and the
// connection is closed right after it.
func closingServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(10 * time.Second))
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				_, _ = io.Copy(io.Discard, req.Body)
				if req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/models") {
					body := `{"object":"list","data":[{"id":"m","max_model_len":8192}]}`
					fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
					return
				}
				if req.Method != http.MethodPost {
					fmt.Fprint(c, "HTTP/1.1 404 Not Found\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n")
					return
				}
				var b strings.Builder
				for _, ev := range []string{
					`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"},"finish_reason":null}]}`,
					`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" there"},"finish_reason":"stop"}]}`,
					`{"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}`,
					`[DONE]`,
				} {
					b.WriteString("data: " + ev + "\n\n")
				}
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\nContent-Length: %d\r\n\r\n%s", b.Len(), b.String())
			})
		}
	})
	return "http://" + ln.Addr().String() + "/v1"
}

// TestServerClosingKeptAliveConnections: against a server that closes
// every connection it answered on while advertising keep-alive, the
// suite's requests follow the module's connection rule (sent again on a
// fresh connection, then no reuse), so no check fails with a reset the
// server's answers do not deserve.
func TestServerClosingKeptAliveConnections(t *testing.T) {
	base := closingServer(t)
	for range 3 { // the closes race the next request: a few rounds
		got := suiteAt(t, Config{Target: capacity.Target{BaseURL: base, Model: "m", MetricsURL: "off"}, Timeout: 10 * time.Second})
		for _, n := range []string{nameStreamFraming, nameUsage, nameFinishReason, nameContent, nameDeterminism} {
			require.Equal(t, Pass, got[n].Outcome, "%s: %s %q", n, got[n].Reason, got[n].Notes)
		}
		for n, v := range got {
			require.NotContains(t, v.Reason, "connection reset", n)
			require.NotContains(t, v.Reason, "EOF", n)
		}
	}
}

package h1_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"

	"github.com/anvilbench/anvil/capacity/internal/h1"
)

// An h1 Transport sends plain HTTP/1.1 requests itself, on the caller's
// goroutine, and keeps their connections alive for the next request.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "hello")
	}))
	defer srv.Close()
	tr := h1.New(&http.Transport{})
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	for range 2 {
		trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { fmt.Print("reused=", info.Reused, " ") }}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodGet, srv.URL, nil)
		resp, err := client.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		fmt.Println(resp.Status, string(b))
	}
	// Output:
	// reused=false 200 OK hello
	// reused=true 200 OK hello
}

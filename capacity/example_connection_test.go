package capacity_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/anvilbench/anvil/capacity"
)

// A client outside a capacity run (a conformance check, a tool) gets the
// run's connection rule by wrapping its transport: a request that meets a
// kept-alive connection the server closed without answering is sent once
// more on a fresh one, and a server that closes kept-alive connections
// right after answering is then served without reuse. Wrapping a
// transport that already follows the rule returns it unchanged.
func ExampleNewConnectionRule() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"tokens":[1,2,3]}`)
	}))
	defer srv.Close()

	rule := capacity.NewConnectionRule(http.DefaultTransport)
	hc := &http.Client{Transport: rule}
	defer hc.CloseIdleConnections()
	resp, err := hc.Post(srv.URL+"/tokenize", "application/json", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	fmt.Println(string(b), capacity.NewConnectionRule(rule) == rule)
	// Output: {"tokens":[1,2,3]} true
}

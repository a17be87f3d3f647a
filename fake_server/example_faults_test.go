package fakeserver_test

import (
	"fmt"
	"net/http"
	"strings"

	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// Faults are named by their strings. A FaultPlan gives the first request
// the http_429 fault; the X-Fake-Fault header picks one per request, and
// an unknown name is a bad request. The traces record what each request got.
func Example_faults() {
	cfg := fakeserver.Fast()
	cfg.Faults.ByIndex = map[int]fakeserver.Fault{0: "http_429"}
	srv := fakeserver.New(cfg)
	defer srv.Close()

	post := func(fault string) {
		body := `{"stream":true,"max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`
		req, err := http.NewRequest(http.MethodPost, srv.BaseURL()+"/chat/completions", strings.NewReader(body))
		if err != nil {
			panic(err)
		}
		if fault != "" {
			req.Header.Set("X-Fake-Fault", fault)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		fmt.Printf("%s, Retry-After %q\n", resp.Status, resp.Header.Get("Retry-After"))
	}
	post("")
	post("http_503")
	post("no_such_fault")

	srv.Close() // waits for the handlers: the traces are final
	for _, tr := range srv.Traces() {
		fmt.Printf("request %d: fault %q, status %d, end %s\n", tr.Index, tr.Fault, tr.Status, tr.End)
	}
	_, err := fakeserver.ParseFault("no_such_fault")
	fmt.Println(err)
	// Output:
	// 429 Too Many Requests, Retry-After "1"
	// 503 Service Unavailable, Retry-After ""
	// 400 Bad Request, Retry-After ""
	// request 0: fault "http_429", status 429, end rejected
	// request 1: fault "http_503", status 503, end rejected
	// request 2: fault "", status 400, end rejected
	// fakeserver: Fault = "no_such_fault": want one of [drop empty_body endless extra_words foreign_marker http_400 http_429 http_500 http_503 ignore_max_tokens late_marker malformed_json omit_marker oversized_event reasoning_only slow_headers stall stream_error usage_total_mismatch vector_count vector_dimension vector_nan wrong_content_type]
}

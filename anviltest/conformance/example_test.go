package conformance_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/anvilbench/anvil/anviltest/conformance"
	"github.com/anvilbench/anvil/capacity"
)

// A Suite runs one check at a time; here the models check against a
// server written in the example, which lists its model with its window,
// and the bad_request check against the same server, which answers every
// chat request with a 404 HTML page instead of an OpenAI error object.
func ExampleSuite() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model","max_model_len":4096}]}`)
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	ctx := context.Background()
	s, err := conformance.New(ctx, conformance.Config{Target: capacity.Target{BaseURL: srv.URL + "/v1"}, Timeout: 10 * time.Second})
	if err != nil {
		panic(err)
	}
	for _, name := range []string{"models", "bad_request"} {
		v := s.Check(ctx, name)
		fmt.Printf("%s: %s: %s\n", v.Check, v.Outcome, v.Reason)
	}
	// Output:
	// models: pass: lists "m", context window 4096 advertised by /models max_model_len
	// bad_request: fail: invalid JSON: Content-Type "text/plain; charset=utf-8", want application/json, the body is not JSON; unknown model: Content-Type "text/plain; charset=utf-8", want application/json, the body is not JSON; malformed messages: Content-Type "text/plain; charset=utf-8", want application/json, the body is not JSON
}

// The Markdown verdict file is a table of the checks that ran.
func ExampleReport_WriteMarkdown() {
	rep := &conformance.Report{
		BaseURL:   "http://localhost:8000/v1",
		Model:     "qwen3-8b",
		StartedAt: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC),
		Verdicts: []conformance.Verdict{
			{Check: "usage", Outcome: conformance.Fail, Reason: "no usage object, although the request set stream_options.include_usage"},
			{Check: "determinism", Outcome: conformance.Skip, Reason: "temperature 0 twice gave different outputs"},
		},
	}
	if err := rep.WriteMarkdown(os.Stdout); err != nil {
		panic(err)
	}
	// Output:
	// # Conformance of qwen3-8b at http://localhost:8000/v1
	//
	// 2026-12-01T09:00:00Z: 0 pass, 1 fail, 1 skip.
	//
	// | check | verdict | reason |
	// |---|---|---|
	// | usage | FAIL | no usage object, although the request set stream_options.include_usage |
	// | determinism | SKIP | temperature 0 twice gave different outputs |
}

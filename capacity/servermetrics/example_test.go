package servermetrics_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/servermetrics"
)

// vllmMetrics is a small /metrics body with vLLM's names.
const vllmMetrics = `# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0"} 4.0
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0"} 120.0
`

// The metrics endpoint is /metrics at the server's root, unless the user
// names one or turns it off.
func ExampleEndpointURL() {
	for _, override := range []string{"", "http://gpu-box:9090/prom", servermetrics.Off} {
		u, err := servermetrics.EndpointURL("http://gpu-box:8000/v1", override)
		fmt.Printf("%q %v\n", u, err)
	}
	// Output:
	// "http://gpu-box:8000/metrics" <nil>
	// "http://gpu-box:9090/prom" <nil>
	// "" <nil>
}

// Probe GETs the endpoint once: whether it answers, in the text format,
// with which engine's names.
func ExampleProbe() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprint(w, vllmMetrics)
	}))
	defer srv.Close()
	r, err := servermetrics.Probe(context.Background(), servermetrics.Config{URL: srv.URL + "/metrics"})
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Answered, r.Text, r.Engine, r.Families, r.Curated)
	// Output:
	// true true vllm 2 [vllm:generation_tokens_total vllm:num_requests_waiting]
}

// A discovered Sampler is one of a run's observers: Start at the
// measured phase's start, Finish (the last sample) when it ends, and its
// end hook writes anvil_go.server_metrics into the report.
func ExampleSampler() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, vllmMetrics)
	}))
	defer srv.Close()
	s, err := servermetrics.Discover(context.Background(), servermetrics.Config{URL: srv.URL + "/metrics", Interval: time.Hour})
	if err != nil {
		panic(err)
	}
	s.Prime(context.Background()) // the first sample, before the phase's clock
	end := s.Start(context.Background(), time.Now())
	s.Finish() // the phase ended: the last sample
	rep := &artifact.Report{MaxTokens: 64}
	end(rep) // the report is assembled: the member, sampling nothing
	m := rep.AnvilGo.ServerMetrics
	fmt.Println(*m.Engine, m.Samples, m.Failed, len(m.Series))
	// Output:
	// vllm 2 0 2
}

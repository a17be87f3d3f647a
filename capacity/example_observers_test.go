package capacity_test

import (
	"context"
	"fmt"

	"github.com/anvilbench/anvil/capacity"
	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// Every run samples the server's Prometheus metrics, found at /metrics
// beside the base URL's /v1, and audits the client itself. The fake
// serves vLLM's names, so the server's generation-token counter is
// checked against the run's usage exactly: its first sample is taken
// before the phase's clock starts, with nothing in flight, and its last
// once every request has ended.
func ExampleTarget_MetricsURL() {
	srv := fakeserver.New(fakeserver.Fast())
	defer srv.Close()
	rep, err := capacity.Run(context.Background(), capacity.Target{BaseURL: srv.BaseURL()},
		capacity.Workload{Requests: 8, Concurrency: 2, ContextTokens: 256, MaxTokens: 16})
	if err != nil {
		panic(err)
	}
	m := rep.AnvilGo.ServerMetrics
	fmt.Println("engine:", *m.Engine)
	fmt.Println("generation tokens:", m.Checks.GenerationTokens.Verdict)
	fmt.Println("audited:", rep.AnvilGo.Audit != nil)

	// MetricsURL "off" samples nothing; the audit stays.
	rep, err = capacity.Run(context.Background(), capacity.Target{BaseURL: srv.BaseURL(), MetricsURL: "off"},
		capacity.Workload{Requests: 2, Concurrency: 1, ContextTokens: 256, MaxTokens: 16})
	if err != nil {
		panic(err)
	}
	fmt.Println("sampled:", rep.AnvilGo.ServerMetrics != nil, "audited:", rep.AnvilGo.Audit != nil)
	// Output:
	// engine: vllm
	// generation tokens: exact
	// audited: true
	// sampled: false audited: true
}

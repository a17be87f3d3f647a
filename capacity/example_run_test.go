package capacity_test

import (
	"context"
	"fmt"
	"log"

	"github.com/anvilbench/anvil/capacity"
	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// ExampleRun measures the embedded fake server: the model and its context
// length come from GET /v1/models, every response must begin with its
// request canary, and the report is ready to write.
func ExampleRun() {
	srv := fakeserver.New(fakeserver.Fast())
	defer srv.Close()

	rep, err := capacity.Run(context.Background(),
		capacity.Target{BaseURL: srv.URL + "/v1", Engine: "fake", GPU: "none"},
		capacity.Workload{Requests: 8, Concurrency: 4, ContextTokens: 2048, RequestCanaries: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("model:", rep.Model, "context:", *rep.MaxContextTokens)
	fmt.Println("completed:", rep.Completed, "of", rep.Requests, "failed:", rep.Failed)
	fmt.Println("canaries passed:", rep.Metrics.RequestCanaryPassed)
	fmt.Println("protocol:", rep.MeasurementProtocol)
	fmt.Println("ttft samples:", rep.Metrics.TTFT.Samples, "eligible:", rep.PerformanceEligible)
	// Output:
	// model: fake-fast context: 32768
	// completed: 8 of 8 failed: 0
	// canaries passed: 8
	// protocol: capacity-v4-reasoning
	// ttft samples: 8 eligible: true
}

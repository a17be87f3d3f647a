package anviltest_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/anvilbench/anvil/anviltest"
	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/artifact"
)

// Capacity is meant for benchmark functions run by go test -bench; here
// testing.Benchmark drives it, against the embedded fake server, for the
// default one-second campaign. WithEnvironment gives the run its own
// ANVIL_* variables (here only ANVIL_OUT, the artifact directory), so the
// example runs the same whatever the shell holds; a benchmark leaves it
// out to take its endpoint and the rest from the real environment.
func Example() {
	out, err := os.MkdirTemp("", "anvil-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(out)
	env := map[string]string{"ANVIL_OUT": out}

	var rep *artifact.Report
	res := testing.Benchmark(func(b *testing.B) {
		rep = anviltest.Capacity(b, capacity.Workload{
			ContextTokens: 4096, Concurrency: 2, MaxTokens: 1024,
		}, anviltest.WithEnvironment(func(name string) string { return env[name] }))
	})
	_, hasDecode := res.Extra["decode-tok/s"]
	// One b.Loop iteration per measured request (and any the run left).
	fmt.Println("every request took an iteration:", res.N >= rep.Requests)
	fmt.Println("protocol:", rep.MeasurementProtocol)
	fmt.Println("failed requests:", res.Extra["failed-req"])
	fmt.Println("reports decode-tok/s:", hasDecode)
	// Output:
	// every request took an iteration: true
	// protocol: capacity-v4-reasoning
	// failed requests: 0
	// reports decode-tok/s: true
}

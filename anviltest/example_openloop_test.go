package anviltest_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/anvilbench/anvil/anviltest"
	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/artifact"
	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// An open-loop benchmark: requests arrive at random (Poisson) at 20 per
// second whatever the server does, at most 8 in flight, against the
// embedded fake server. The default one-second -benchtime is a schedule of
// one second; the SLO adds goodput-req/s to the line. In a benchmark
// function this is one call; ANVIL_RATE, ANVIL_ARRIVAL and
// ANVIL_BURSTINESS set the same fields from the environment.
func ExampleCapacity_openLoop() {
	out, err := os.MkdirTemp("", "anvil-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(out)
	env := map[string]string{"ANVIL_OUT": out}

	var rep *artifact.Report
	res := testing.Benchmark(func(b *testing.B) {
		rep = anviltest.Capacity(b, capacity.Workload{
			ContextTokens: 4096, MaxTokens: 1024, Concurrency: 8,
			Rate: 20, Arrival: "poisson",
		}, anviltest.WithSLO(capacity.SLO{E2E: time.Minute}),
			// The same run whatever ANVIL_* the shell holds.
			anviltest.WithEnvironment(func(name string) string { return env[name] }))
	})
	a := rep.AnvilGo.Arrival
	_, hasGoodput := res.Extra["goodput-req/s"]
	fmt.Printf("open loop: %s at %g req/s, at most %d in flight\n", a.Process, a.RateRPS, a.MaxInFlight)
	fmt.Println("every request has a scheduled time and a queue time:", rep.AnvilGo.Requests[rep.Requests-1].QueueMS != nil)
	fmt.Println("offered and achieved rates recorded:", a.OfferedRPS != nil && a.AchievedRPS != nil)
	fmt.Println("judged on the scheduled clock:", rep.AnvilGo.SLO.LatencyClock)
	fmt.Println("reports goodput-req/s:", hasGoodput)
	// Output:
	// open loop: poisson at 20 req/s, at most 8 in flight
	// every request has a scheduled time and a queue time: true
	// offered and achieved rates recorded: true
	// judged on the scheduled clock: scheduled
	// reports goodput-req/s: true
}

// A sweep finds the highest concurrency that meets a TTFT SLO: it doubles
// the concurrency from Start until a probe fails, then bisects between the
// last pass and the first failure. The fake server here has 3 slots of
// 60 ms each (fakeserver.Slots), so the knee is near 3 in flight; where
// exactly a probe on the real clock passes depends on the machine, so this
// example prints what holds on any machine (TestSweepFindsTheKnee pins the
// knee exactly, under fake time). Each probe is 50 requests
// (capacity.Search's probe size: at an attainment of 0.8, at least
// 10/(1-0.8) = 50). In a benchmark function, Sweep runs every probe as a
// sub-benchmark (BenchmarkX/conc=2, conc=4, ...) and reports the result in
// BenchmarkX/best.
func ExampleSweep() {
	out, err := os.MkdirTemp("", "anvil-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(out)
	env := map[string]string{"ANVIL_OUT": out, "ANVIL_PROGRESS": "0"}
	cfg, err := fakeserver.Slots(3, 60*time.Millisecond)
	if err != nil {
		panic(err)
	}
	srv := fakeserver.New(cfg)
	defer srv.Close()

	var res capacity.SearchResult
	testing.Benchmark(func(b *testing.B) {
		res = anviltest.Sweep(b, capacity.Workload{ContextTokens: 512, Requests: 50},
			capacity.SearchSpec{Kind: "concurrency", Start: 2, Max: 16},
			anviltest.WithTarget(capacity.Target{BaseURL: srv.BaseURL(), Engine: "fake", GPU: "none"}),
			anviltest.WithSLO(capacity.SLO{TTFT: 60 * time.Millisecond, Attainment: 0.8}),
			anviltest.WithEnvironment(func(name string) string { return env[name] }))
	})
	sized, highest := true, 0.0
	for _, r := range res.Runs {
		sized = sized && r.Requests == 50
		if r.AnvilGo.SLO.Passed {
			highest = max(highest, r.AnvilGo.Search.Value)
		}
	}
	fmt.Println("probes run:", len(res.Runs) >= 2)
	fmt.Println("every probe sent 50 requests:", sized)
	fmt.Println("best is the highest concurrency that passed:", res.Best == highest)
	// Output:
	// probes run: true
	// every probe sent 50 requests: true
	// best is the highest concurrency that passed: true
}

package anviltest_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/anvilbench/anvil/anviltest"
	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/trace"
	"github.com/anvilbench/anvil/capacity/traffic"
)

// A benchmark that replays the first 40 rows of the shipped Azure
// conversation trace, a thousand times faster than recorded, instead of
// its synthetic plan: each row is sent at its offset with its recorded
// prompt length and max_tokens its output length, at most 32 in flight,
// against the embedded fake's plain profile (no reasoning, which a
// trace's output lengths leave no room for).
// ANVIL_TRACE, ANVIL_TRACE_SPEEDUP and ANVIL_TRACE_FIRST do the same from
// the environment.
func ExampleWithTraffic() {
	out, err := os.MkdirTemp("", "anvil-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(out)
	env := map[string]string{"ANVIL_OUT": out, "ANVIL_FAKE_PROFILE": "plain"}
	const file = "../testdata/traces/azure-AzureLLMInferenceTrace_conv-first500.csv"
	f, err := os.Open(file)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	r := trace.NewReader(f, file, trace.SpeedUp(1000), trace.First(40))
	var recs []trace.Record
	for r.Scan() {
		recs = append(recs, r.Record())
	}
	desc, err := r.Description()
	if err != nil {
		panic(err)
	}

	var rep *artifact.Report
	testing.Benchmark(func(b *testing.B) {
		rep = anviltest.Capacity(b, capacity.Workload{Concurrency: 32},
			anviltest.WithTraffic(traffic.Replay{Records: recs, Description: &desc}),
			anviltest.WithEnvironment(func(name string) string { return env[name] }))
	})
	w := rep.AnvilGo.Workload
	fmt.Printf("replayed %d rows of %s (%s), speed-up %g\n", w.Trace.Rows, w.Trace.File, w.Trace.Format, w.Trace.SpeedUp)
	fmt.Println("requests sent:", w.SendLagMS.Requests)
	fmt.Println("first request's trace line:", *rep.AnvilGo.Requests[0].TraceLine)
	fmt.Println("its max_tokens is the recorded output length:", *rep.AnvilGo.Requests[0].PlannedOutputTokens == recs[0].OutputTokens)
	// Output:
	// replayed 40 rows of azure-AzureLLMInferenceTrace_conv-first500.csv (azure), speed-up 1000
	// requests sent: 40
	// first request's trace line: 2
	// its max_tokens is the recorded output length: true
}

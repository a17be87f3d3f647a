package anviltest_test

import (
	"fmt"
	"testing"

	"github.com/anvilbench/anvil/anviltest"
	"github.com/anvilbench/anvil/capacity"
)

// The example capacity benchmarks. Run them with
//
//	go test -bench Capacity -run '^$' ./anviltest
//
// against the embedded fake server, or against a real endpoint with
// ANVIL_BASE_URL (see the package documentation). Reasoning models spend
// hundreds of tokens before the visible answer, hence the MaxTokens.

// TestMain prints the run's identity (model, engine, gpu, target, the
// fake's profile) as benchfmt configuration before the benchmarks, so the
// go test output carries it.
func TestMain(m *testing.M) { anviltest.Main(m) }

// exampleMaxTokens leaves room for the reasoning before the answer.
const exampleMaxTokens = 1024

// BenchmarkCapacityContext sweeps the prompt length at a fixed concurrency:
// TTFT and effective prefill show how the server handles long contexts.
func BenchmarkCapacityContext(b *testing.B) {
	for _, ctx := range []int{4096, 16384, 65536} {
		b.Run(fmt.Sprintf("ctx=%d/conc=4", ctx), func(b *testing.B) {
			anviltest.Capacity(b, capacity.Workload{
				ContextTokens: ctx, Concurrency: 4, MaxTokens: exampleMaxTokens,
			})
		})
	}
}

// BenchmarkCapacityConcurrency sweeps the number of requests in flight at a
// fixed context: per-request decode slows while aggregate output
// throughput rises until the server saturates.
func BenchmarkCapacityConcurrency(b *testing.B) {
	for _, conc := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("ctx=32768/conc=%d", conc), func(b *testing.B) {
			anviltest.Capacity(b, capacity.Workload{
				ContextTokens: 32768, Concurrency: conc, MaxTokens: exampleMaxTokens,
			})
		})
	}
}

// BenchmarkCapacityReasoning checks correctness under load while it
// measures: every response must begin with its own canary marker (no
// cross-talk between concurrent requests) and be exactly 16 words "code"
// (strict: any other answer is a failed request, never a latency sample).
func BenchmarkCapacityReasoning(b *testing.B) {
	b.Run("ctx=8192/conc=4/canaries/words=16", func(b *testing.B) {
		anviltest.Capacity(b, capacity.Workload{
			ContextTokens:          8192,
			Concurrency:            4,
			MaxTokens:              exampleMaxTokens,
			RequestCanaries:        true,
			ResponseWords:          16,
			ControlledOutputPolicy: capacity.PolicyStrict,
		})
	})
}

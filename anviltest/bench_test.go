package anviltest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/anvilbench/anvil/anviltest"
	"github.com/anvilbench/anvil/capacity"
)

// The example capacity benchmarks. Run them with
//
//	go test -bench Capacity -run '^$' ./anviltest
//
// against the embedded fake server, or against a real endpoint with
// ANVIL_BASE_URL (see the package documentation). They leave MaxTokens
// to ANVIL_MAX_TOKENS, else its default of 1024: reasoning models spend
// hundreds of tokens before the visible answer.

// TestMain prints the run's identity (model, engine, gpu, target, the
// fake's profile) as benchfmt configuration before the benchmarks, so the
// go test output carries it.
func TestMain(m *testing.M) { anviltest.Main(m) }

// BenchmarkCapacityContext sweeps the prompt length at a fixed concurrency:
// TTFT and effective prefill show how the server handles long contexts.
func BenchmarkCapacityContext(b *testing.B) {
	for _, ctx := range []int{4096, 16384, 65536} {
		b.Run(fmt.Sprintf("ctx=%d/conc=4", ctx), func(b *testing.B) {
			anviltest.Capacity(b, capacity.Workload{ContextTokens: ctx, Concurrency: 4})
		})
	}
}

// BenchmarkCapacityConcurrency sweeps the number of requests in flight at a
// fixed context: per-request decode slows while aggregate output
// throughput rises until the server saturates.
func BenchmarkCapacityConcurrency(b *testing.B) {
	for _, conc := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("ctx=32768/conc=%d", conc), func(b *testing.B) {
			anviltest.Capacity(b, capacity.Workload{ContextTokens: 32768, Concurrency: conc})
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
			RequestCanaries:        true,
			ResponseWords:          16,
			ControlledOutputPolicy: "strict",
		})
	})
}

// BenchmarkCapacityOpenLoop offers requests at random (Poisson) at 20 per
// second whatever the server does, at most 16 in flight: the latencies a
// user arriving at that rate sees, queueing included (anvil_go.requests
// scheduled_ttft_ms). -benchtime is the schedule's length (or Nx its
// request count); ANVIL_RATE, ANVIL_ARRIVAL and ANVIL_BURSTINESS override
// nothing the Workload sets, so use them on a Workload without a Rate.
func BenchmarkCapacityOpenLoop(b *testing.B) {
	b.Run("ctx=8192/conc=16/rate=20", func(b *testing.B) {
		anviltest.Capacity(b, capacity.Workload{
			ContextTokens: 8192, Concurrency: 16,
			Rate: 20, Arrival: "poisson",
		})
	})
}

// BenchmarkSLOSweep finds the highest concurrency at which 90% of the
// requests see their first token within 400 ms (ANVIL_SLO_TPOT,
// ANVIL_SLO_E2E and ANVIL_SLO_ATTAINMENT add to the SLO; the option's TTFT
// bound wins over ANVIL_SLO_TTFT):
//
//	go test -bench SLOSweep -run '^$' ./anviltest
//
// Every probe is a sub-benchmark (conc=1, conc=2, ...) with its artifacts;
// BenchmarkSLOSweep/best reports best-conc.
func BenchmarkSLOSweep(b *testing.B) {
	anviltest.Sweep(b, capacity.Workload{ContextTokens: 8192},
		capacity.SearchSpec{Kind: "concurrency", Max: 64},
		anviltest.WithSLO(capacity.SLO{TTFT: 400 * time.Millisecond}))
}

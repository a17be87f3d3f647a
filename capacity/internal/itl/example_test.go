package itl_test

import (
	"fmt"
	"time"

	"github.com/anvilbench/anvil/capacity/internal/itl"
)

// A worker reuses one Stream per request and records each successful stream
// into its Run; the Run gives the run's chunk_timing.
func Example() {
	run, err := itl.NewRun(itl.DefaultStallRule())
	if err != nil {
		fmt.Println(err)
		return
	}
	var s itl.Stream
	for req := range 2 {
		s.Reset()
		at := 120 * time.Millisecond // first output: the TTFO, not a gap
		s.Add(at)
		for i := 1; i <= 20; i++ {
			gap := 5 * time.Millisecond
			if req == 1 && i == 10 {
				gap = 400 * time.Millisecond // the server paused
			}
			at += gap
			s.Add(at)
		}
		tokens := 42 // usage.completion_tokens
		sum, err := run.Record(&s, &tokens)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("request %d: chunks %d, itl p50 %v ms, max %v ms, stalls %d (threshold %v ms), %v tokens/chunk\n",
			req, sum.OutputChunks, sum.ITL.P50, sum.ITL.Max, sum.Stalls, sum.StallThresholdMS, *sum.TokensPerChunk)
	}
	ct, _ := run.Result()
	fmt.Printf("run: %d gaps, p50 %v ms, p99 %v ms, max %v ms, exact %v, stalls %d, %v tokens/chunk\n",
		ct.Gaps, ct.ITL.P50, ct.ITL.P99, ct.ITL.Max, ct.Exact, ct.Stalls, *ct.TokensPerChunkMean)
	// Output:
	// request 0: chunks 21, itl p50 5 ms, max 5 ms, stalls 0 (threshold 50 ms), 2 tokens/chunk
	// request 1: chunks 21, itl p50 5 ms, max 400 ms, stalls 1 (threshold 50 ms), 2 tokens/chunk
	// run: 40 gaps, p50 5 ms, p99 400 ms, max 400 ms, exact true, stalls 1, 2 tokens/chunk
}

package capacity

import (
	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/itl"
)

// The run's side of chunk timing (capacity/PROTOCOL.md#anvil-go,
// chunk_timing): each worker measures its streams with a
// client.ChunkTimer, which adds every successful one to the measured
// phase's client.ChunkRun; that run becomes anvil_go.chunk_timing.

// stallRule is the stall rule of a resolved workload: the itl defaults, or
// Workload.StallThreshold alone when it is set.
func stallRule(w Workload) itl.StallRule {
	r := itl.DefaultStallRule()
	r.Override = w.StallThreshold
	return r
}

// newChunkRun returns the measured phase's chunk timing for n requests,
// with room for the gaps of n streams of the workload's MaxTokens each
// (one gap an output event, at most itl.ExactGaps in all): a stream's
// gaps join it without allocating.
func (r *runner) newChunkRun(n int) *client.ChunkRun {
	gaps := itl.ExactGaps
	if m := r.plan.Workload.MaxTokens; m > 0 && n <= itl.ExactGaps/m {
		gaps = n * m
	}
	return client.NewChunkRun(r.stallRule, gaps)
}

// validateChunksAndSizing checks Workload.StallThreshold and
// Workload.PromptSizing.
func (w Workload) validateChunksAndSizing(v *validator) {
	if w.StallThreshold < 0 || (w.timeoutValid() && w.StallThreshold > w.Timeout) {
		v.add("Workload.StallThreshold", w.StallThreshold, "must be 0 (the relative stall rule) or in (0s, Timeout = %v]", w.Timeout)
	}
	switch w.PromptSizing {
	case promptSizingReference, promptSizingExact:
	default:
		v.add("Workload.PromptSizing", w.PromptSizing, "must be %q or %q", promptSizingReference, promptSizingExact)
	}
}

package capacity

import (
	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/itl"
)

// The run's side of chunk timing (capacity/PROTOCOL.md#anvil-go,
// chunk_timing): each worker measures its streams with a
// client.ChunkTimer, whose itl.Run is merged into the runner's once, when
// the worker exits; the merged run becomes anvil_go.chunk_timing.

// stallRule is the stall rule of a resolved workload: the itl defaults, or
// Workload.StallThreshold alone when it is set.
func stallRule(w Workload) itl.StallRule {
	r := itl.DefaultStallRule()
	r.Override = w.StallThreshold
	return r
}

// mergeChunks adds a worker's run to the runner's, once per worker.
func (r *runner) mergeChunks(c *client.ChunkTimer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.chunks == nil {
		r.chunks = c.Run()
		return
	}
	if err := r.chunks.Merge(c.Run()); err != nil {
		panic(err) // every worker of a run applies the run's rule
	}
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

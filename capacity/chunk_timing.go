package capacity

import (
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/itl"
)

// This file measures the gaps between the output chunks of every stream
// (capacity/PROTOCOL.md#anvil-go, chunk_timing) with package internal/itl. The
// per-chunk path is streamResult.apply, which hands each output event's
// arrival offset to the worker's itl.Stream: no lock, no allocation once
// the stream's buffer has grown to the longest stream the worker has seen.
// Each worker accumulates its own itl.Run and merges it into the runner's
// once, when it exits.

// stallRule is the stall rule of a resolved workload: the itl defaults, or
// Workload.StallThreshold alone when it is set.
func stallRule(w Workload) itl.StallRule {
	r := itl.DefaultStallRule()
	r.Override = w.StallThreshold
	return r
}

// chunkTimer is one worker's chunk timing: a Stream reused from one request
// to the next, and the worker's share of the run's distribution.
type chunkTimer struct {
	stream itl.Stream
	rule   itl.StallRule
	run    *itl.Run
}

// newChunkTimer returns a worker's timer for rule, a validated rule.
func newChunkTimer(rule itl.StallRule) *chunkTimer {
	run, err := itl.NewRun(rule)
	if err != nil {
		panic(err) // Workload validation accepts only valid rules
	}
	return &chunkTimer{rule: rule, run: run}
}

// begin empties the stream and connects it to res, whose output events are
// then stamped as offsets from origin (any instant before the request:
// gaps are differences).
func (c *chunkTimer) begin(res *streamResult, origin time.Time) {
	c.stream.Reset()
	res.gaps, res.origin = &c.stream, origin
}

// finish summarizes the stream of a finished request. A successful one
// joins the run's distribution; a failed one is summarized on its own (its
// gaps end early and would bias the run's). completion is usage's
// completion token count, nil when not reported. The result is nil when
// the stream cannot be summarized.
func (c *chunkTimer) finish(success bool, completion *int) *itl.Summary {
	if completion != nil && *completion < 0 {
		completion = nil // not a count: no tokens per chunk
	}
	var (
		s   itl.Summary
		err error
	)
	if success {
		s, err = c.run.Record(&c.stream, completion)
	} else {
		s, err = c.stream.Summary(c.rule, completion)
	}
	if err != nil {
		return nil // events out of order: the client's stamps are monotonic, so never
	}
	return &s
}

// mergeChunks adds a worker's run to the runner's, once per worker.
func (r *runner) mergeChunks(c *chunkTimer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.chunks == nil {
		r.chunks = c.run
		return
	}
	if err := r.chunks.Merge(c.run); err != nil {
		panic(err) // every worker of a run applies the run's rule
	}
}

// chunkTimingOf is anvil_go.chunk_timing of a run: nil when no successful
// request had a gap.
func chunkTimingOf(run *itl.Run) *artifact.ChunkTiming {
	if run == nil {
		return nil
	}
	ct, ok := run.Result()
	if !ok {
		return nil
	}
	return &artifact.ChunkTiming{
		ITLMS:         artifact.Quantiles{P50: ct.ITL.P50, P90: ct.ITL.P90, P99: ct.ITL.P99, P999: ct.ITL.P999, Max: ct.ITL.Max},
		Gaps:          ct.Gaps,
		Exact:         ct.Exact,
		RelativeError: ct.RelativeError,
		Stalls:        ct.Stalls,
		StallRule: artifact.StallRule{Relative: ct.StallRule.Relative, FloorMS: ct.StallRule.FloorMS,
			OverrideMS: ct.StallRule.OverrideMS},
		TokensPerChunkMean: ct.TokensPerChunkMean,
		PerToken:           ct.PerToken,
	}
}

// setChunkDetail fills the chunk members of a request's anvil_go entry.
func setChunkDetail(d *artifact.RequestDetail, s *itl.Summary) {
	if s == nil {
		return
	}
	if s.ITL != nil {
		d.ITLMS = &artifact.Quantiles{P50: s.ITL.P50, P90: s.ITL.P90, P99: s.ITL.P99, Max: s.ITL.Max}
	}
	d.OutputChunks, d.Stalls, d.TokensPerChunk = s.OutputChunks, s.Stalls, s.TokensPerChunk
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

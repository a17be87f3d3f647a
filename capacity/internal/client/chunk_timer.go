package client

import (
	"sync"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/itl"
	"github.com/anvilbench/anvil/capacity/sse"
)

// A ChunkTimer measures the gaps between the output chunks of one worker's
// streams (capacity/PROTOCOL.md#anvil-go, chunk_timing) with package
// internal/itl: a Stream reused from one request to the next, whose gaps
// a successful request adds to the run's distribution, a ChunkRun shared
// by every worker of the run. The per-chunk path hands each output
// event's arrival offset to the Stream: no lock, no allocation once the
// Stream's buffer has grown to the longest stream the worker has seen.
type ChunkTimer struct {
	stream itl.Stream
	run    *ChunkRun
	// events reads the worker's streams one after the other, its buffers
	// kept from one to the next; nil until the first.
	events *sse.Reader
}

// A ChunkRun is a run's chunk timing: the distribution of the gaps of
// every successful stream its ChunkTimers finished, under one stall rule.
// The timers add a stream each under its lock, once per request; the
// room for the run's exact gaps is reserved when it is made, so that
// adding a stream's gaps allocates nothing (itl.Run.Reserve).
type ChunkRun struct {
	mu  sync.Mutex
	run *itl.Run
}

// NewChunkRun returns an empty ChunkRun for rule, a validated rule, with
// room for gaps exact gaps (at most itl.ExactGaps are kept exactly; a run
// that brings more than gaps grows its room as they come).
func NewChunkRun(rule itl.StallRule, gaps int) *ChunkRun {
	run, err := itl.NewRun(rule)
	if err != nil {
		panic(err) // Workload validation accepts only valid rules
	}
	run.Reserve(gaps)
	return &ChunkRun{run: run}
}

// Run is the run's distribution. It must be read once every timer of the
// run has finished its last stream.
func (r *ChunkRun) Run() *itl.Run { return r.run }

// NewChunkTimer returns a worker's timer, which adds its successful
// streams to run.
func NewChunkTimer(run *ChunkRun) *ChunkTimer {
	return &ChunkTimer{run: run}
}

// Begin empties the stream and connects it to ex, whose output events are
// then stamped as offsets from origin (any instant before the request:
// gaps are differences).
func (c *ChunkTimer) Begin(ex *Exchange, origin time.Time) {
	c.stream.Reset()
	ex.stream.gaps, ex.stream.origin = &c.stream, origin
	ex.stream.reader = &c.events
}

// Finish summarizes the stream of a finished request. A successful one
// joins the worker's distribution; a failed one is summarized on its own
// (its gaps end early and would bias the run's). completion is usage's
// completion token count, nil when not reported. The result is nil when
// the stream cannot be summarized.
func (c *ChunkTimer) Finish(success bool, completion *int) *itl.Summary {
	if completion != nil && *completion < 0 {
		completion = nil // not a count: no tokens per chunk
	}
	var (
		s   itl.Summary
		err error
	)
	if success {
		c.run.mu.Lock()
		s, err = c.run.run.Record(&c.stream, completion)
		c.run.mu.Unlock()
	} else {
		s, err = c.stream.Summary(c.run.run.Rule(), completion)
	}
	if err != nil {
		return nil // events out of order: the client's stamps are monotonic, so never
	}
	return &s
}

// ChunkTimingOf is anvil_go.chunk_timing of a run, the workers' Runs
// merged: nil when no successful request had a gap.
func ChunkTimingOf(run *itl.Run) *artifact.ChunkTiming {
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

// SetChunkDetail fills the chunk members of a request's anvil_go entry
// from the summary ChunkTimer.Finish returned (nothing for nil).
func SetChunkDetail(d *artifact.RequestDetail, s *itl.Summary) {
	if s == nil {
		return
	}
	if s.ITL != nil {
		d.ITLMS = &artifact.Quantiles{P50: s.ITL.P50, P90: s.ITL.P90, P99: s.ITL.P99, Max: s.ITL.Max}
	}
	d.OutputChunks, d.Stalls, d.TokensPerChunk = s.OutputChunks, s.Stalls, s.TokensPerChunk
}

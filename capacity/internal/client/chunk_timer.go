package client

import (
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/itl"
	"github.com/anvilbench/anvil/capacity/sse"
)

// A ChunkTimer measures the gaps between the output chunks of one worker's
// streams (capacity/PROTOCOL.md#anvil-go, chunk_timing) with package
// internal/itl: a Stream reused from one request to the next, and the
// worker's share of the run's distribution. The per-chunk path hands each
// output event's arrival offset to the Stream: no lock, no allocation once
// the Stream's buffer has grown to the longest stream the worker has seen.
// A worker's Run is merged into the run's once, when the worker exits.
type ChunkTimer struct {
	stream itl.Stream
	rule   itl.StallRule
	run    *itl.Run
	// events reads the worker's streams one after the other, its buffers
	// kept from one to the next; nil until the first.
	events *sse.Reader
}

// NewChunkTimer returns a worker's timer for rule, a validated rule.
func NewChunkTimer(rule itl.StallRule) *ChunkTimer {
	run, err := itl.NewRun(rule)
	if err != nil {
		panic(err) // Workload validation accepts only valid rules
	}
	return &ChunkTimer{rule: rule, run: run}
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
		s, err = c.run.Record(&c.stream, completion)
	} else {
		s, err = c.stream.Summary(c.rule, completion)
	}
	if err != nil {
		return nil // events out of order: the client's stamps are monotonic, so never
	}
	return &s
}

// Run is the worker's distribution: every successful stream Finish
// recorded.
func (c *ChunkTimer) Run() *itl.Run { return c.run }

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

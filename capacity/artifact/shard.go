package artifact

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/anvilbench/anvil/capacity/internal/itl"
)

// This file holds the anvil_go members of a workload split over several
// load generators (capacity/PROTOCOL.md#anvil-go, shard and shards): what a
// shard's artifact records so that Merge can make one artifact of the whole
// workload, and what the merged artifact records of its shards.

// shardStartTolerance is how far a shard's recorded start
// (started_at_unix_ns) may lie from the common start instant
// (anvil_go.shard.start_at_unix_ns) for Merge to accept it. A shard waits
// for the instant, so it starts after it by its timer's wake-up latency
// (microseconds to a few milliseconds on a loaded host); a shard later than
// this sent its schedule skewed against the others' by more than the
// clock skew a shared NTP or chrony domain is trusted to within, and one
// earlier did not wait or has another clock.
const shardStartTolerance = 100 * time.Millisecond

// Shard is "anvil_go.shard": the run is shard Index of Count of one
// workload, every shard computing the same global plan and taking its share
// of the requests, all starting their measured phase at one instant of a
// shared wall clock. Request indexes, in the v1 rows and in requests[], are
// the global ones; offsets are from this run's own start
// (started_at_unix_ns), which Merge re-bases onto the common start.
type Shard struct {
	Index int // "index": 0-based, < Count
	Count int // "count": shards of the workload, >= 1
	// StartAtUnixNS is "start_at_unix_ns": the common start instant
	// (ANVIL_START_AT) every shard waited for, in Unix nanoseconds.
	StartAtUnixNS int64
	Host          string // "host": the host name of the machine that ran it
	// ClockDomainID is "clock_domain_id": the operator's label of the wall
	// clock the shards share (the top-level clock_domain_id); nil when none
	// was given, and then the shard cannot be merged.
	ClockDomainID *string
	// PlanFingerprint is "plan_fingerprint": "sha256:<64 hex>" of the global
	// plan (contexts, prompt bytes, max_tokens, schedule), the same in every
	// shard of one workload.
	PlanFingerprint string

	shape shape
}

// ShardSet is "anvil_go.shards" of a merged artifact: the shards it was
// made of.
type ShardSet struct {
	Count int // "count": shards merged
	// StartAtUnixNS is "start_at_unix_ns": the common start instant; the
	// offsets of the merged requests[] are from it.
	StartAtUnixNS   int64
	PlanFingerprint string // "plan_fingerprint": the shards' plan fingerprint
	// Artifacts is "artifacts": one record per shard, sorted by index.
	Artifacts []ShardRecord

	shape shape
}

// ShardRecord is one element of "anvil_go.shards.artifacts".
type ShardRecord struct {
	Index int    // "index"
	Host  string // "host"
	// StartedAtUnixNS and FinishedAtUnixNS are "started_at_unix_ns" and
	// "finished_at_unix_ns": the shard's own measured phase on the shared
	// clock.
	StartedAtUnixNS  int64
	FinishedAtUnixNS int64
	// SHA256 is "sha256": "sha256:<64 hex>" of the shard artifact's bytes
	// as they were merged (as written).
	SHA256 string
	// ServerMetrics is "server_metrics": the shard's own
	// anvil_go.server_metrics, its offsets re-based onto the common start
	// as anvil_go.requests are; nil when the shard had none.
	ServerMetrics *ServerMetrics

	shape shape
}

// gapDistribution is "anvil_go.chunk_timing.distribution": the run's
// inter-chunk gaps as package itl keeps them (itl.Gaps), exact up to
// itl.ExactGaps gaps and a DDSketch beyond. Exactly one member is non-nil.
type gapDistribution struct {
	// ExactNS is "exact_ns": every gap in nanoseconds, ascending; nil once
	// the run sketched them.
	ExactNS []int64
	// Sketch is "sketch": the sketch of every gap; nil while exact.
	Sketch *gapSketch

	shape shape
}

// gapSketch is "anvil_go.chunk_timing.distribution.sketch".
type gapSketch struct {
	// RelativeAccuracy is "relative_accuracy": itl.RelativeAccuracy, which
	// fixes the buckets.
	RelativeAccuracy float64
	Count            int   // "count": gaps in the sketch
	MaxNS            int64 // "max_ns": the largest gap, exact
	Zero             int   // "zero": gaps of 0 ns, below every bucket
	// Bins is "bins": bucket index -> gaps in it (non-empty buckets only).
	// Bucket i holds the gaps v ms with gamma^i <= v < gamma^(i+1), gamma =
	// (1+a)/(1-a), a the relative accuracy (sketches-go's logarithmic
	// mapping: i = floor(ln v / ln gamma)).
	Bins map[int]int

	shape shape
}

// SetDistribution sets the gaps c writes as its "distribution" to those of
// run (none when run is nil or has no gap): a shard's artifact carries
// them so that Merge can recompute the workload's percentiles. Like
// run.Result, it may reorder the run's stored gaps.
func (c *ChunkTiming) SetDistribution(run *itl.Run) { c.distribution = gapsOf(run) }

// HasDistribution reports whether c carries its gaps (SetDistribution, or
// a "distribution" read from the document), as Merge needs.
func (c *ChunkTiming) HasDistribution() bool { return c.distribution != nil }

// gapsOf is the distribution of run as the artifact stores it, nil when
// run is nil or has no gap.
func gapsOf(run *itl.Run) *gapDistribution {
	if run == nil {
		return nil
	}
	g := run.Gaps()
	switch {
	case g.Sketch != nil:
		s := &gapSketch{RelativeAccuracy: itl.RelativeAccuracy, Count: g.Sketch.Count,
			MaxNS: int64(g.Sketch.Max), Zero: g.Sketch.Zero, Bins: make(map[int]int, len(g.Sketch.Bins))}
		for _, b := range g.Sketch.Bins {
			s.Bins[b.Index] = b.Count
		}
		return &gapDistribution{Sketch: s}
	case len(g.Exact) > 0:
		ns := make([]int64, len(g.Exact))
		for i, d := range g.Exact {
			ns[i] = int64(d)
		}
		return &gapDistribution{ExactNS: ns}
	}
	return nil
}

// gaps converts d back to package itl's form, refusing a sketch of another
// accuracy.
func (d *gapDistribution) gaps() (itl.Gaps, error) {
	if d.Sketch == nil {
		g := itl.Gaps{Exact: make([]time.Duration, len(d.ExactNS))}
		for i, ns := range d.ExactNS {
			g.Exact[i] = time.Duration(ns)
		}
		return g, nil
	}
	s := d.Sketch
	if s.RelativeAccuracy != itl.RelativeAccuracy {
		return itl.Gaps{}, fmt.Errorf("sketch.relative_accuracy %v, want %v (this version's buckets)", s.RelativeAccuracy, itl.RelativeAccuracy)
	}
	if len(d.ExactNS) > 0 {
		return itl.Gaps{}, fmt.Errorf("both exact_ns (%d gaps) and sketch are set", len(d.ExactNS))
	}
	g := itl.Gaps{Sketch: &itl.SketchedGaps{Count: s.Count, Max: time.Duration(s.MaxNS), Zero: s.Zero}}
	for i, c := range s.Bins {
		g.Sketch.Bins = append(g.Sketch.Bins, itl.Bin{Index: i, Count: c})
	}
	slices.SortFunc(g.Sketch.Bins, func(a, b itl.Bin) int { return cmp.Compare(a.Index, b.Index) })
	return g, nil
}

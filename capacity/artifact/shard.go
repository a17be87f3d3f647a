package artifact

// This file holds the anvil_go members of a workload split over several
// load generators (capacity/PROTOCOL.md#anvil-go, shard and shards): what a
// shard's artifact records so that package capacity/merge can make one
// artifact of the whole workload, and what the merged artifact records of
// its shards.

// Shard is "anvil_go.shard": the run is shard Index of Count of one
// workload, every shard computing the same global plan and taking its share
// of the requests, all starting their measured phase at one instant of a
// shared wall clock. Request indexes, in the v1 rows and in requests[], are
// the global ones; offsets are from this run's own start
// (started_at_unix_ns), which the merge re-bases onto the common start.
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
	// InFlight is "in_flight": the requests in flight across the shards
	// of an open loop, each of which kept the whole cap; nil for a closed
	// loop, whose shards split the workers.
	InFlight *ShardInFlight

	shape shape
}

// ShardInFlight is "anvil_go.shards.in_flight": how many requests the
// shards of an open loop had in flight at once on the shared clock,
// reconstructed from the merged requests[] (in flight at t: sent at or
// before t, not ended by t). Every shard keeps the whole cap, so together
// they can exceed it where one process would have queued.
type ShardInFlight struct {
	Cap  int // "cap": the in-flight cap each shard kept (Workload.Concurrency)
	Peak int // "peak": the most requests in flight at once, at a send
	// OverCapRequests is "over_cap_requests": the requests sent while at
	// least Cap others were in flight, each one a single process would
	// have held until one ended.
	OverCapRequests int

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

// GapDistribution is "anvil_go.chunk_timing.distribution": the gaps of
// the run as it kept them, exact up to 65,536 gaps and sketched beyond
// (capacity/PROTOCOL.md#anvil-go, chunk_timing). Exactly one member is
// non-nil.
type GapDistribution struct {
	// ExactNS is "exact_ns": every gap in nanoseconds, ascending; nil once
	// the run sketched them.
	ExactNS []int64
	// Sketch is "sketch": the sketch of every gap; nil while exact.
	Sketch *GapSketch

	shape shape
}

// GapSketch is "anvil_go.chunk_timing.distribution.sketch": the gaps in
// the logarithmic buckets of a DDSketch.
type GapSketch struct {
	// RelativeAccuracy is "relative_accuracy": the accuracy a of the
	// buckets, which fixes them (0.01).
	RelativeAccuracy float64
	Count            int   // "count": gaps in the sketch
	MaxNS            int64 // "max_ns": the largest gap, exact
	Zero             int   // "zero": gaps of 0 ns, below every bucket
	// Bins is "bins": bucket index -> gaps in it (non-empty buckets only).
	// Bucket i holds the gaps v ms with gamma^i <= v < gamma^(i+1), gamma =
	// (1+a)/(1-a): i = floor(ln v / ln gamma).
	Bins map[int]int

	shape shape
}

package capacity

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// This file is the shard mode of a run (capacity/PROTOCOL.md#shards): one
// workload split over several load generators, each computing the same
// global plan and schedule and measuring its share of the requests, all
// starting their measured phase at one instant of a shared wall clock.
// merge.Shards (package capacity/merge) makes one artifact of the shards'
// artifacts.

// maxShards is the largest Shard.Count.
const maxShards = 1024

// ErrShardLate is wrapped by the error of a shard that was ready (warm-up
// and connection warm-up done) after Shard.StartAt: it sends nothing, since
// its schedule would be skewed against the other shards', and its report
// (every planned request of its share never sent) is returned with it.
var ErrShardLate = errors.New("capacity: the shard was ready after its common start")

// Shard makes a run shard Index of Count of its workload. The zero value
// (Count 0) is a whole run.
//
// Every shard computes the same plan and schedule as a whole run of the
// Workload (same Requests, Seed, contexts, prompts, arrival offsets) and
// measures the requests whose index i has i mod Count == Index, under their
// global indexes. In an open loop each is due at its global offset from the
// common start, so the shards together send exactly the whole run's
// schedule, and every shard keeps the whole in-flight cap (Concurrency):
// no shard queues a request that the whole run would have sent on time
// (the shards hold no more requests in flight than the whole run), and
// the merge reconstructs from the rows how many were in flight at once
// across the shards and which requests went out over the cap
// (artifact.ShardInFlight). A closed loop's workers are split as evenly as
// possible: every shard gets Concurrency / Count, and the first
// Concurrency mod Count shards one more (the shares of 8 over 3 shards are
// 3, 3 and 2). The warm-up and the connection warm-up run on every shard
// before the start.
type Shard struct {
	// Index is this shard, 0..Count-1.
	Index int
	// Count is the number of shards, 0 (no shard) or 1..1024, at most
	// Workload.Requests (every shard has a request) and, in a closed loop,
	// Workload.Concurrency (every shard has a worker).
	Count int
	// StartAt is the common start, required with Count > 0: the shard
	// prepares (probe, plan, warm-up, connections), waits until StartAt on
	// its wall clock and starts its measured phase there; its offsets are
	// from StartAt and its started_at_unix_ns is StartAt. A shard ready
	// after StartAt fails with ErrShardLate.
	StartAt time.Time
}

// shardConcurrency is what a run of w keeps in flight: the whole
// Concurrency for a whole run and for every shard of an open loop (the
// in-flight cap, which each shard keeps), the shard's share of the workers
// in a closed loop (shareOf).
func shardConcurrency(w Workload) int {
	if w.Shard.Count < 1 || w.OpenLoop() {
		return w.Concurrency
	}
	return shareOf(w.Concurrency, w.Shard.Index, w.Shard.Count)
}

// shareOf is the share of concurrency of shard index of count:
// concurrency / count, plus one for the first concurrency mod count shards.
// The shares of all shards add up to concurrency. A count below 1 is a
// whole run (concurrency itself), and an index outside 0..count-1 no shard
// (0).
func shareOf(concurrency, index, count int) int {
	switch {
	case count < 1:
		return concurrency
	case index < 0 || index >= count:
		return 0
	}
	share := concurrency / count
	if index < concurrency%count {
		share++
	}
	return share
}

// validateShard checks Workload.Shard against the other fields (defaults
// filled in).
func (w Workload) validateShard(v *validator) {
	s := w.Shard
	if s.Count == 0 {
		if s.Index != 0 {
			v.add("Workload.Shard.Index", s.Index, "must be 0 without Workload.Shard.Count")
		}
		if !s.StartAt.IsZero() {
			v.add("Workload.Shard.StartAt", s.StartAt.Format(time.RFC3339Nano), "must be zero without Workload.Shard.Count")
		}
		return
	}
	switch {
	case s.Count < 0 || s.Count > maxShards:
		v.intRange("Workload.Shard.Count", s.Count, 0, maxShards)
	case s.Count > w.Concurrency && !w.OpenLoop():
		v.add("Workload.Shard.Count", s.Count, "must be at most Workload.Concurrency, %d, in a closed loop: every shard runs at least one worker (run the workloads of Concurrency >= %d, or fewer shards)", w.Concurrency, s.Count)
	case s.Count > w.Requests:
		v.add("Workload.Shard.Count", s.Count, "must be at most Workload.Requests, %d: every shard sends at least one request", w.Requests)
	}
	v.intRange("Workload.Shard.Index", s.Index, 0, s.Count-1)
	if s.StartAt.IsZero() {
		v.add("Workload.Shard.StartAt", "zero", "must be set with Workload.Shard.Count: the common start of every shard")
	}
	if w.Source != nil {
		v.add("Workload.Source", "set", "must be nil with Workload.Shard (a shard splits the synthetic plan)")
	}
	if w.Schedule != nil {
		v.add("Workload.Schedule", "set", "must be nil with Workload.Shard (a shard splits the closed loop or the arrival schedule)")
	}
}

// shardNeedsClock refuses a shard without Target.ClockDomainID: the merge
// aligns shards only on a declared clock domain, so the shard would measure
// for nothing.
func shardNeedsClock(t Target) error {
	if t.ClockDomainID != "" {
		return nil
	}
	return badField("Target.ClockDomainID", "", "must be set with Workload.Shard: shards merge only on one declared clock domain (the machines' shared NTP or chrony service)")
}

// indexes are the measured request indexes of the shard in a plan of n
// requests, ascending; nil for a whole run.
func (s Shard) indexes(n int) []int {
	if s.Count == 0 {
		return nil
	}
	var ix []int
	for i := s.Index; i < n; i += s.Count {
		ix = append(ix, i)
	}
	return ix
}

// shardNonce is the unique-mode nonce of a sharded run: every shard must
// send the same prompts, so the nonce comes from what they share, the
// common start and the seed (a new StartAt, a new nonce).
func shardNonce(s Shard, seed int64) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(s.StartAt.UnixNano()))
	binary.BigEndian.PutUint64(b[8:], uint64(seed))
	sum := sha256.Sum256(b[:])
	return hex.EncodeToString(sum[:8])
}

// planFingerprint is "sha256:<64 hex>" of the global plan: for every
// request index in order, its planned context, the SHA-256 of its prompt
// bytes and max_tokens, then the due offset of every scheduled request in
// nanoseconds (none for a closed loop); each number a big-endian uint64.
func planFingerprint(p *plan, schedule []time.Duration) (string, error) {
	h := sha256.New()
	var num [8]byte
	put := func(v uint64) {
		binary.BigEndian.PutUint64(num[:], v)
		h.Write(num[:])
	}
	var prompt []byte
	var err error
	for i, ctx := range p.Contexts {
		if prompt, err = p.AppendPrompt(prompt[:0], i); err != nil {
			return "", err
		}
		sum := sha256.Sum256(prompt)
		put(uint64(ctx))
		h.Write(sum[:])
		put(uint64(p.Workload.MaxTokens))
	}
	for _, d := range schedule {
		put(uint64(d))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// waitStart waits until at on the wall clock and returns the start of the
// measured phase: a reading of the monotonic clock whose wall-clock value is
// at, so every offset is from the common start and a request due at offset
// d is due at at+d. A shard already past at returns the time it was ready
// and ErrShardLate naming how late; ctx ending returns at once (the run is
// cancelled).
func waitStart(ctx context.Context, s Shard) (time.Time, error) {
	now := time.Now()
	if late := now.Sub(s.StartAt); late > 0 {
		return now, fmt.Errorf("%w: shard %d of %d was ready %v after Workload.Shard.StartAt %s: it sent nothing (start the shards later, e.g. ANVIL_START_AT further ahead)",
			ErrShardLate, s.Index, s.Count, late, s.StartAt.UTC().Format(time.RFC3339Nano))
	}
	t := time.NewTimer(s.StartAt.Sub(now))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return time.Now(), nil // a cancelled run: the measured phase dispatches nothing
	}
	now = time.Now()
	return now.Add(s.StartAt.Sub(now)), nil // now's monotonic reading, at's wall clock
}

// shardOffsets are the due offsets of a shard's indexes in schedule (the
// shard's own schedule, for its offered rate); schedule itself for a whole
// run (owned nil) or a closed loop (schedule nil).
func shardOffsets(schedule []time.Duration, owned []int) []time.Duration {
	if schedule == nil || owned == nil {
		return schedule
	}
	out := make([]time.Duration, len(owned))
	for k, i := range owned {
		out[k] = schedule[i]
	}
	return out
}

// shardOf is anvil_go.shard of a sharded run.
func shardOf(s Shard, t Target, fingerprint string) *artifact.Shard {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	return &artifact.Shard{Index: s.Index, Count: s.Count, StartAtUnixNS: s.StartAt.UnixNano(),
		Host: host, ClockDomainID: optional(t.ClockDomainID), PlanFingerprint: fingerprint}
}

// recordShard records a shard's members in its report: anvil_go.shard, the
// gap distribution the merge needs (chunk_timing.distribution), and for a
// late shard the reason it sent nothing (run.stop_reason).
func recordShard(rep *artifact.Report, shard *artifact.Shard, r *runner, startErr error) {
	x := rep.AnvilGo
	x.Shard = shard
	if x.ChunkTiming != nil && r.chunks != nil {
		x.ChunkTiming.Distribution = r.chunks.Distribution()
	}
	if errors.Is(startErr, ErrShardLate) && x.Run != nil {
		reason := startErr.Error()
		x.Run.StopReason = &reason
	}
}

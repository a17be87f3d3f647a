package merge

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// This file is Shards and the refusals of artifacts that are not the
// shards of one workload; check.go holds the keys they must agree on,
// build.go the assembly, observers.go the members the run's observers
// write.

// Artifact is one shard's artifact as it was written.
type Artifact struct {
	// Name names the artifact in errors (its file name, say).
	Name string
	// Data is the artifact's bytes as written; anvil_go.shards records
	// their SHA-256.
	Data []byte
}

// ErrNotMergeable is wrapped by every refusal of Shards: the artifacts are
// not every shard, exactly once, of one workload on one clock.
var ErrNotMergeable = errors.New("the artifacts are not the shards of one workload")

// shardStartTolerance is how far a shard's recorded start
// (started_at_unix_ns) may lie from the common start instant
// (anvil_go.shard.start_at_unix_ns) for Shards to accept it. A shard waits
// for the instant, so it starts after it by its timer's wake-up latency
// (microseconds to a few milliseconds on a loaded host); a shard later than
// this sent its schedule skewed against the others' by more than the
// clock skew a shared NTP or chrony domain is trusted to within, and one
// earlier did not wait or has another clock.
const shardStartTolerance = 100 * time.Millisecond

// Shards makes one v1 artifact of a workload from the artifacts of all its
// shards, in any order. It fails closed, wrapping ErrNotMergeable and naming
// the problem and the artifacts, unless every artifact is a shard
// (anvil_go.shard) of one workload (the same identity keys and plan
// fingerprint, one shard count, each index once, no request index in two
// places), all declare the same non-null clock_domain_id, each started
// within 100 ms of the common start instant, each one's stored metrics
// are its rows' (artifact.Report.CheckMetrics), and each one's
// anvil_go.requests[] offsets are its rows' and, in an open loop, the
// global arrival schedule's (checkTimelines).
//
// The merged artifact has the shards' request rows and failures under their
// global indexes, every v1 metric recomputed from them
// (artifact.Report.Recompute), the wall clock from the earliest shard start
// to the latest shard end on the shared clock, anvil_go.requests re-based
// onto the common start, and anvil_go.shards; how each member merges is
// listed in capacity/PROTOCOL.md#merging-shards.
func Shards(shards ...Artifact) (*artifact.Report, error) {
	if len(shards) == 0 {
		return nil, fmt.Errorf("merge: no shard artifact given: %w", ErrNotMergeable)
	}
	in := make([]shardIn, len(shards))
	for i, s := range shards {
		r, err := artifact.Read(bytes.NewReader(s.Data))
		if err != nil {
			return nil, fmt.Errorf("merge: %s: %w", s.Name, err)
		}
		if err := r.CheckMetrics(); err != nil {
			return nil, fmt.Errorf("merge: %s: %w: %w", s.Name, err, ErrNotMergeable)
		}
		sum := sha256.Sum256(s.Data)
		in[i] = shardIn{name: s.Name, r: r, sha: fingerprintPrefix + hex.EncodeToString(sum[:])}
		if err := in[i].check(); err != nil {
			return nil, err
		}
	}
	if err := checkOneWorkload(in); err != nil {
		return nil, err
	}
	slices.SortFunc(in, func(a, b shardIn) int { return cmp.Compare(a.shard().Index, b.shard().Index) })
	if err := checkShardSet(in); err != nil {
		return nil, err
	}
	if err := checkRequestIndexes(in); err != nil {
		return nil, err
	}
	if err := checkTimelines(in); err != nil {
		return nil, err
	}
	return build(in)
}

// fingerprintPrefix starts a SHA-256 fingerprint: "sha256:<64 hex>".
const fingerprintPrefix = "sha256:"

// shardIn is one shard artifact being merged.
type shardIn struct {
	name string
	r    *artifact.Report
	sha  string // fingerprintPrefix + hex of its bytes
}

func (s *shardIn) shard() *artifact.Shard { return s.r.AnvilGo.Shard }

// refuse is a refusal of Shards naming what is wrong.
func refuse(format string, args ...any) error {
	return fmt.Errorf("merge: "+format+": %w", append(args, ErrNotMergeable)...)
}

// check refuses an artifact that is not a shard on a declared clock, or
// that started late or early.
func (s *shardIn) check() error {
	if s.r.AnvilGo == nil || s.r.AnvilGo.Shard == nil {
		return refuse("%s is not a shard artifact (it has no anvil_go.shard)", s.name)
	}
	sh := s.shard()
	if sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count {
		return refuse("%s: anvil_go.shard index %d of count %d, want 0 <= index < count", s.name, sh.Index, sh.Count)
	}
	switch {
	case s.r.ClockDomainID == nil || *s.r.ClockDomainID == "":
		return refuse("%s (shard %d): clock_domain_id is null: independent artifacts are aligned only on an operator-supplied clock domain (set ANVIL_CLOCK_DOMAIN_ID on every shard)", s.name, sh.Index)
	case sh.ClockDomainID == nil || *sh.ClockDomainID != *s.r.ClockDomainID:
		return refuse("%s (shard %d): anvil_go.shard.clock_domain_id %s differs from clock_domain_id %q", s.name, sh.Index, quoteOrNull(sh.ClockDomainID), *s.r.ClockDomainID)
	}
	if !strings.HasPrefix(sh.PlanFingerprint, fingerprintPrefix) {
		return refuse("%s (shard %d): anvil_go.shard.plan_fingerprint %q, want sha256:<hex>", s.name, sh.Index, sh.PlanFingerprint)
	}
	switch late, early := span(sh.StartAtUnixNS, s.r.StartedAtUnixNS), span(s.r.StartedAtUnixNS, sh.StartAtUnixNS); {
	case late > uint64(shardStartTolerance):
		return refuse("%s (shard %d) started late: %v after the common start %s (tolerance %v)", s.name, sh.Index, durationLabel(late), unixLabel(sh.StartAtUnixNS), shardStartTolerance)
	case early > uint64(shardStartTolerance):
		return refuse("%s (shard %d) started early: %v before the common start %s (tolerance %v): it did not wait, or its clock is not the others'", s.name, sh.Index, durationLabel(early), unixLabel(sh.StartAtUnixNS), shardStartTolerance)
	}
	if s.r.FinishedAtUnixNS < s.r.StartedAtUnixNS {
		return refuse("%s (shard %d): finished_at_unix_ns %d before started_at_unix_ns %d", s.name, sh.Index, s.r.FinishedAtUnixNS, s.r.StartedAtUnixNS)
	}
	return nil
}

// checkShardSet refuses a duplicate or a missing shard; in is sorted by
// shard index and has one count.
func checkShardSet(in []shardIn) error {
	count := in[0].shard().Count
	for i := 1; i < len(in); i++ {
		if a, b := &in[i-1], &in[i]; a.shard().Index == b.shard().Index {
			return refuse("duplicate shard %d of %d: %s and %s", a.shard().Index, count, a.name, b.name)
		}
	}
	next := 0
	for _, s := range in {
		if s.shard().Index != next {
			return refuse("shard %d of %d is missing (have %s)", next, count, shardList(in))
		}
		next++
	}
	if next != count {
		return refuse("shard %d of %d is missing (have %s)", next, count, shardList(in))
	}
	return nil
}

// shardList names the shards given: "0 (a.json), 2 (c.json)".
func shardList(in []shardIn) string {
	parts := make([]string, len(in))
	for i, s := range in {
		parts[i] = fmt.Sprintf("%d (%s)", s.shard().Index, s.name)
	}
	return strings.Join(parts, ", ")
}

// checkRequestIndexes refuses a request index that two shards (or one
// twice) account for, in the v1 rows and failures or in anvil_go.requests.
func checkRequestIndexes(in []shardIn) error {
	for _, part := range []struct {
		what    string
		indexes func(r *artifact.Report) []int
	}{
		{"request_timings/failures", func(r *artifact.Report) []int {
			var ix []int
			for _, row := range r.RequestTimings {
				ix = append(ix, row.RequestIndex)
			}
			for _, f := range r.Failures {
				ix = append(ix, f.RequestIndex)
			}
			return ix
		}},
		{"anvil_go.requests", func(r *artifact.Report) []int {
			var ix []int
			for _, d := range r.AnvilGo.Requests {
				ix = append(ix, d.RequestIndex)
			}
			return ix
		}},
	} {
		seen := make(map[int]string)
		for _, s := range in {
			for _, i := range part.indexes(s.r) {
				if prev, dup := seen[i]; dup {
					return refuse("request index %d twice in %s: %s and %s", i, part.what, prev, s.name)
				}
				seen[i] = s.name
			}
		}
	}
	return nil
}

// quoteOrNull is *s quoted, or null.
func quoteOrNull(s *string) string {
	if s == nil {
		return "null"
	}
	return fmt.Sprintf("%q", *s)
}

// unixLabel is a Unix nanosecond instant as RFC 3339 UTC.
func unixLabel(ns int64) string { return time.Unix(0, ns).UTC().Format(time.RFC3339Nano) }

// span is b - a in nanoseconds when b >= a, else 0; exact for any two
// int64 instants (their difference may not fit in an int64).
func span(a, b int64) uint64 {
	if b < a {
		return 0
	}
	return uint64(b) - uint64(a)
}

// durationLabel is ns as a time.Duration, or in seconds past its range.
func durationLabel(ns uint64) string {
	if ns > math.MaxInt64 {
		return fmt.Sprintf("%.0fs", float64(ns)/1e9)
	}
	return time.Duration(ns).String()
}

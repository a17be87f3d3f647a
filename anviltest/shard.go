package anviltest

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/anvilbench/anvil/capacity"
)

// Environment variables of a workload split over several load generators
// (capacity.Shard; the package documentation, Many machines). Like the others they fill only
// what the Workload leaves at zero (a Workload.Shard with Count > 0 wins).
const (
	// envShard makes the run shard i (0-based) of N: "i/N".
	envShard = "ANVIL_SHARD"
	// envShards makes the run shard i of N, N its value and i the value of
	// jobCompletionIndex (set on every pod of a Kubernetes Indexed Job).
	envShards = "ANVIL_SHARDS"
	// envStartAt is the common start of the shards, RFC 3339
	// (2027-03-04T05:06:07Z): each shard prepares, waits for it and
	// starts its measured phase there (capacity.Shard.StartAt).
	envStartAt = "ANVIL_START_AT"
	// jobCompletionIndex is the variable a Kubernetes Indexed Job sets on
	// each pod to its index; with envShards it is the shard index.
	jobCompletionIndex = "JOB_COMPLETION_INDEX"
)

// parseShard parses ANVIL_SHARD's "i/N".
func parseShard(e *environment, v string) error {
	is, ns, ok := strings.Cut(v, "/")
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return errNotAllowed
	}
	e.shard = capacity.Shard{Index: i, Count: n}
	return checkShardCount(n)
}

// parseShards parses ANVIL_SHARDS's count.
func parseShards(e *environment, v string) error {
	n, err := positiveInt(v, checkShardCount)
	e.shards = n
	return err
}

// checkShardCount checks a shard count against capacity's bound on
// Workload.Shard.Count (for a workload with a request and a worker per
// shard, which the run itself checks).
func checkShardCount(n int) error {
	return checkWorkload("Workload.Shard.Count", capacity.Workload{
		Requests: n, Concurrency: n, Shard: capacity.Shard{Count: n, StartAt: time.Unix(1, 0)}})
}

// parseStartAt parses ANVIL_START_AT.
func parseStartAt(e *environment, v string) error {
	at, err := time.Parse(time.RFC3339Nano, v)
	e.startAt = at
	return err
}

// applyShardEnv fills Workload.Shard from ANVIL_SHARD, or ANVIL_SHARDS
// and JOB_COMPLETION_INDEX, and ANVIL_START_AT, when the Workload sets no
// shard.
func (s *settings) applyShardEnv(w capacity.Workload) (capacity.Workload, error) {
	e, err := s.env()
	if err != nil || w.Shard.Count > 0 {
		return w, err
	}
	sh := e.shard
	if e.shards > 0 {
		if sh.Count > 0 {
			return w, fmt.Errorf("anviltest: %s=%s and %s=%d are both set: set one", envShard, s.getenv(envShard), envShards, e.shards)
		}
		v := s.getenv(jobCompletionIndex)
		i, err := strconv.Atoi(v)
		if err != nil || i < 0 || i >= e.shards {
			return w, fmt.Errorf("anviltest: %s=%d needs %s, the shard index in 0..%d (set on every pod of a Kubernetes Indexed Job), got %q; use %s=i/N elsewhere",
				envShards, e.shards, jobCompletionIndex, e.shards-1, v, envShard)
		}
		sh = capacity.Shard{Index: i, Count: e.shards}
	}
	sh.StartAt = w.Shard.StartAt
	if sh.StartAt.IsZero() {
		sh.StartAt = e.startAt
	}
	if sh.Count == 0 && !e.startAt.IsZero() {
		return w, fmt.Errorf("anviltest: %s=%s without %s or %s: the common start is for shards", envStartAt, s.getenv(envStartAt), envShard, envShards)
	}
	w.Shard = sh
	return w, nil
}

// lateShardAdvice says what to do about a shard that was ready after its
// common start, given when its benchmark began. A start that had passed
// before the benchmark began is the fate of every sub-benchmark after the
// first of a command that runs several with one ANVIL_START_AT: the first
// one's run used it up.
func lateShardAdvice(s capacity.Shard, began time.Time) string {
	if began.After(s.StartAt) {
		return fmt.Sprintf("%s had passed %v before this benchmark began: one %s starts one benchmark's measured phase, "+
			"so run each sub-benchmark as a command of its own (-test.bench matching one, such as "+
			"'^BenchmarkCapacity$/^ctx=32768/conc=16$') with its own %s (go doc github.com/anvilbench/anvil/anviltest, Many machines)",
			envStartAt, began.Sub(s.StartAt).Round(time.Millisecond), envStartAt, envStartAt)
	}
	return fmt.Sprintf("set %s further ahead: every shard must finish preparing (probe, warm-up, connections) before it", envStartAt)
}

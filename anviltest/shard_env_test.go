package anviltest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
)

// TestShardEnvironment: ANVIL_SHARD (or ANVIL_SHARDS with
// JOB_COMPLETION_INDEX) and ANVIL_START_AT fill Workload.Shard when the
// Workload sets none; every inconsistent setting is an error naming the
// variables.
func TestShardEnvironment(t *testing.T) {
	at := time.Date(2027, 3, 4, 5, 6, 7, 0, time.UTC)
	mine := capacity.Shard{Index: 0, Count: 2, StartAt: at.Add(time.Minute)}
	for _, tc := range []struct {
		name  string
		env   env
		shard capacity.Shard // the Workload's own
		want  capacity.Shard
		err   string
	}{
		{name: "none", env: env{}},
		{name: "shard", env: env{envShard: "1/3", envStartAt: "2027-03-04T05:06:07Z"}, want: capacity.Shard{Index: 1, Count: 3, StartAt: at}},
		{name: "job index", env: env{envShards: "4", jobCompletionIndex: "2", envStartAt: "2027-03-04T05:06:07Z"}, want: capacity.Shard{Index: 2, Count: 4, StartAt: at}},
		{name: "workload wins", env: env{envShard: "1/3", envStartAt: "2027-03-04T05:06:07Z"}, shard: mine, want: mine},
		{name: "no job index", env: env{envShards: "4"}, err: "ANVIL_SHARDS=4 needs JOB_COMPLETION_INDEX, the shard index in 0..3"},
		{name: "job index out of range", env: env{envShards: "4", jobCompletionIndex: "4"}, err: `got "4"`},
		{name: "both", env: env{envShards: "4", envShard: "1/4", jobCompletionIndex: "1"}, err: "ANVIL_SHARD=1/4 and ANVIL_SHARDS=4 are both set"},
		{name: "start without shards", env: env{envStartAt: "2027-03-04T05:06:07Z"}, err: "ANVIL_START_AT=2027-03-04T05:06:07Z without ANVIL_SHARD or ANVIL_SHARDS"},
		{name: "bad shard", env: env{envShard: "3/3"}, err: `ANVIL_SHARD = "3/3"`},
		{name: "bad shard count", env: env{envShard: "0/0"}, err: `ANVIL_SHARD = "0/0": want i/N, 0 <= i < N`},
		{name: "shard count over capacity's bound", env: env{envShard: "1/2000"}, err: `ANVIL_SHARD = "1/2000": want i/N, 0 <= i < N: capacity: Workload.Shard.Count = 2000: must be in 0..1024`},
		{name: "shards over capacity's bound", env: env{envShards: "2000", jobCompletionIndex: "1"}, err: `ANVIL_SHARDS = "2000": want the shard count, N >= 1 (the index from JOB_COMPLETION_INDEX): capacity: Workload.Shard.Count = 2000: must be in 0..1024`},
		{name: "bad start", env: env{envShard: "0/2", envStartAt: "tomorrow"}, err: "an RFC 3339 instant"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSettings([]Option{WithEnvironment(tc.env.get)})
			w, err := s.applyWorkloadEnv(capacity.Workload{Shard: tc.shard})
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, w.Shard)
		})
	}
}

// FuzzShardVariable: ANVIL_SHARD either fails or names a shard that
// exists (0 <= i < N, a count capacity accepts), which its canonical form
// "i/N" names again.
func FuzzShardVariable(f *testing.F) {
	for _, s := range []string{"0/1", "1/3", "3/3", "-1/2", "1/0", "02/8", " 1/2", "1/2/3", "1024/1025", "+1/2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		var e environment
		if parseShard(&e, v) != nil {
			return
		}
		sh := e.shard
		require.True(t, sh.Index >= 0 && sh.Index < sh.Count, "%q: %+v", v, sh)
		withStart := sh
		withStart.StartAt = time.Unix(1, 0)
		_, err := capacity.Workload{Requests: sh.Count, Concurrency: sh.Count, Shard: withStart}.Resolved()
		require.NoError(t, err, "%q: capacity accepts the shard", v)
		var again environment
		require.NoError(t, parseShard(&again, fmt.Sprintf("%d/%d", sh.Index, sh.Count)))
		require.Equal(t, sh, again.shard)
	})
}

// TestShardCountErrorNamesTheVariableSet: ANVIL_SHARD=0/8 on a closed
// loop of concurrency 4 is refused naming ANVIL_SHARD=0/8, the variable
// the user set (never ANVIL_SHARDS, which is unset); on an open loop of
// the same cap, whose shards each keep the whole cap, it is accepted.
func TestShardCountErrorNamesTheVariableSet(t *testing.T) {
	s := newSettings([]Option{WithEnvironment(env{envShard: "0/8", envStartAt: "2027-03-04T05:06:07Z"}.get)})
	w, err := s.applyWorkloadEnv(capacity.Workload{Concurrency: 4, Requests: 40})
	require.NoError(t, err)
	_, err = w.Resolved()
	err = explainFields(err, s.envFieldNames()...)
	require.ErrorContains(t, err, "Workload.Shard.Count = 8: must be at most Workload.Concurrency, 4, in a closed loop")
	require.ErrorContains(t, err, "(Workload.Shard.Count comes from ANVIL_SHARD=0/8)")
	require.NotContains(t, err.Error(), "ANVIL_SHARDS")

	w.Rate = 40
	_, err = w.Resolved()
	require.NoError(t, err)
}

// TestLateShardAdvice: a shard whose common start had passed before its
// benchmark began (a later sub-benchmark of one command) is told to run
// each sub-benchmark with its own ANVIL_START_AT; one that began in time
// and was ready late, to set the start further ahead.
func TestLateShardAdvice(t *testing.T) {
	at := time.Date(2027, 3, 4, 5, 6, 7, 0, time.UTC)
	sh := capacity.Shard{Index: 1, Count: 3, StartAt: at}
	require.Equal(t, "ANVIL_START_AT had passed 4.96s before this benchmark began: one ANVIL_START_AT starts one benchmark's measured phase, "+
		"so run each sub-benchmark as a command of its own (-test.bench matching one, such as '^BenchmarkCapacity$/^ctx=32768/conc=16$') "+
		"with its own ANVIL_START_AT (go doc github.com/anvilbench/anvil/anviltest, Many machines)",
		lateShardAdvice(sh, at.Add(4960*time.Millisecond)))
	require.Equal(t, "set ANVIL_START_AT further ahead: every shard must finish preparing (probe, warm-up, connections) before it",
		lateShardAdvice(sh, at.Add(-time.Second)))
}

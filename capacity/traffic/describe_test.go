package traffic_test

import (
	"os"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/session"
	"github.com/anvilbench/anvil/capacity/trace"
	"github.com/anvilbench/anvil/capacity/traffic"
)

// readDescribed reads a shipped trace with its Description.
func readDescribed(t *testing.T, file string, opts ...trace.Option) ([]trace.Record, trace.Description) {
	f, err := os.Open("../../testdata/traces/" + file)
	require.NoError(t, err)
	defer f.Close()
	r := trace.NewReader(f, file, opts...)
	var recs []trace.Record
	for r.Scan() {
		recs = append(recs, r.Record())
	}
	require.NoError(t, r.Err())
	d, err := r.Description()
	require.NoError(t, err)
	return recs, d
}

// TestReplayArtifact: a replay's artifact describes the trace (file,
// format, sha256, rows, speed-up, First) and every request's trace line,
// planned and counted prompt and output tokens and cached tokens; on the
// bubble's clock every request leaves exactly at its offset, so the send
// lag is 0 throughout.
func TestReplayArtifact(t *testing.T) {
	recs, desc := readDescribed(t, "mooncake-conversation_trace-first500.jsonl", trace.SpeedUp(8), trace.First(60))
	synctest.Test(t, func(t *testing.T) {
		srv := newChatServer(t, 20*time.Millisecond)
		replay := traffic.Replay{Records: recs, Salt: "run-1", Description: &desc}
		rep, err := capacity.Run(t.Context(), srv.target(), replay.Workload(capacity.Workload{Concurrency: 64}))
		require.NoError(t, err)
		require.Equal(t, len(recs), rep.Completed)
		require.Nil(t, rep.ContextTokens, "the v1 context_tokens of a replay is null")

		w := rep.AnvilGo.Workload
		require.NotNil(t, w)
		require.Equal(t, artifact.WorkloadTrace, w.Kind)
		require.Equal(t, &artifact.TraceWorkload{File: desc.File, Format: "mooncake", SHA256: desc.SHA256, Bytes: int(desc.Bytes),
			Rows: 60, FirstLine: 1, LastLine: 60, SpeedUp: 8, First: 60}, w.Trace)
		require.Len(t, desc.SHA256, 64)
		require.Equal(t, artifact.SendLag{Requests: 60}, *w.SendLagMS)
		for i, d := range rep.AnvilGo.Requests {
			rec := recs[i]
			require.Equal(t, i, d.RequestIndex)
			require.Equal(t, rec.Line, *d.TraceLine)
			require.Equal(t, rec.PromptTokens, d.PlannedPromptTokens)
			require.Equal(t, rec.PromptTokens, *d.CountedPromptTokens, "the server counts 3 characters a token")
			require.Equal(t, rec.OutputTokens, *d.PlannedOutputTokens, "max_tokens is output_length")
			require.Equal(t, 6, *d.CountedOutputTokens, "the server's completion_tokens")
			require.Equal(t, 0, *d.CachedPromptTokens, "one message: nothing cached on this server")
			require.Nil(t, d.Session)
		}
	})
}

// TestSessionsArtifact: a 3-turn session workload's artifact names its
// spec and reports each request's session, turn and the server's cached
// tokens: turn k's cached tokens are every earlier message's.
func TestSessionsArtifact(t *testing.T) {
	spec, err := session.ParseSpec("turns=3,user=200,output=32,think=2s")
	require.NoError(t, err)
	synctest.Test(t, func(t *testing.T) {
		srv := newChatServer(t, 100*time.Millisecond)
		s, err := traffic.Synthetic(spec, 2, traffic.SessionOptions{Users: 2, Salt: "run-1"})
		require.NoError(t, err)
		rep, err := capacity.Run(t.Context(), srv.target(), s.Workload(capacity.Workload{}))
		require.NoError(t, err)
		require.Equal(t, 6, rep.Completed)
		w := rep.AnvilGo.Workload
		require.Equal(t, artifact.WorkloadSessions, w.Kind)
		require.Nil(t, w.Trace)
		require.Nil(t, w.SendLagMS)
		require.Equal(t, spec.String(), *w.Sessions.Spec)
		require.Equal(t, 2, w.Sessions.Sessions)
		require.Equal(t, 2, *w.Sessions.Users)

		answerTokens := len(answer(0)) / 3 // every answer of this server is as long, for n < 10
		perTurn := map[int][]int{}
		for _, d := range rep.AnvilGo.Requests {
			require.NotNil(t, d.Session)
			require.Nil(t, d.TraceLine)
			perTurn[*d.Turn] = append(perTurn[*d.Turn], *d.CachedPromptTokens)
			require.Equal(t, 32, *d.PlannedOutputTokens)
		}
		require.Equal(t, map[int][]int{
			1: {0, 0},
			2: {200 + answerTokens, 200 + answerTokens},
			3: {400 + 2*answerTokens, 400 + 2*answerTokens},
		}, map[int][]int{1: perTurn[1], 2: perTurn[2], 3: perTurn[3]})
	})
}

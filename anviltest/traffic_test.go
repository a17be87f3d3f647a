package anviltest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/trace"
	"github.com/anvilbench/anvil/capacity/traffic"
	"github.com/anvilbench/anvil/reporters"
)

const (
	mooncakeTrace = "../testdata/traces/mooncake-conversation_trace-first500.jsonl"
	azureTrace    = "../testdata/traces/azure-AzureLLMInferenceTrace_conv-first500.csv"
)

// runTraffic runs one benchmark of w against the embedded fake with the
// environment vars (the fake sped up a hundredfold) and returns its report.
func runTraffic(t *testing.T, w capacity.Workload, vars env, opts ...Option) *artifact.Report {
	t.Helper()
	clearEnv(t)
	setBenchtime(t, "1x")
	vars[envFakeTimeScale] = "0.01"
	var rep *artifact.Report
	testing.Benchmark(func(b *testing.B) {
		rep = Capacity(b, w, append([]Option{WithEnvironment(vars.get), withOutDir(t.TempDir())}, opts...)...)
	})
	require.NotNil(t, rep, "the benchmark failed")
	return rep
}

// fileSHA256 is the hex SHA-256 of a file.
func fileSHA256(t *testing.T, path string) string {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// traceRows reads the rows of a shipped trace.
func traceRows(t *testing.T, path string, opts ...trace.Option) []trace.Record {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r := trace.NewReader(f, path, opts...)
	var recs []trace.Record
	for r.Scan() {
		recs = append(recs, r.Record())
	}
	require.NoError(t, r.Err())
	return recs
}

// TestTraceReplacesThePlan: ANVIL_TRACE replays the first rows of the
// Mooncake conversation trace instead of the benchmark's synthetic plan
// (its fixed context and -benchtime 1x): every row is sent once, with
// max_tokens its output_length, context_tokens null, and the artifact
// names the trace by its SHA-256; the fake's prefix cache sees the rows'
// shared blocks.
func TestTraceReplacesThePlan(t *testing.T) {
	skipUnderRace(t, "120 trace rows; TestReplayReportIsTheReplays races a replay of 40")
	rep := runTraffic(t, capacity.Workload{ContextTokens: 4096, Concurrency: 64, MaxTokens: 256},
		env{envTrace: mooncakeTrace, envTraceSpeedUp: "100", envTraceFirst: "120", envFakeProfile: "plain"})
	recs := traceRows(t, mooncakeTrace, trace.First(120))
	require.Equal(t, 120, rep.Requests)
	require.Nil(t, rep.ContextTokens)
	w := rep.AnvilGo.Workload
	require.Equal(t, artifact.WorkloadTrace, w.Kind)
	require.Equal(t, fileSHA256(t, mooncakeTrace), w.Trace.SHA256)
	require.Equal(t, "mooncake", w.Trace.Format)
	require.Equal(t, 100.0, w.Trace.SpeedUp)
	require.Equal(t, 120, w.Trace.First)
	require.Equal(t, 120, w.SendLagMS.Requests)

	lines := map[int]bool{}
	sharedHits, shared := 0, 0
	seen := map[int64]bool{}
	for _, d := range rep.AnvilGo.Requests {
		require.NotNil(t, d.TraceLine, "request %d", d.RequestIndex)
		require.False(t, lines[*d.TraceLine], "line %d sent twice", *d.TraceLine)
		lines[*d.TraceLine] = true
		rec := recs[d.RequestIndex]
		require.Equal(t, rec.Line, *d.TraceLine)
		require.Equal(t, rec.OutputTokens, *d.PlannedOutputTokens, "line %d: max_tokens is output_length", rec.Line)
		require.Equal(t, rec.PromptTokens, d.PlannedPromptTokens)
		if d.Outcome == artifact.OutcomeSuccess && seen[rec.Blocks[0]] {
			shared++
			if *d.CachedPromptTokens > 0 {
				sharedHits++
			}
		}
		for _, b := range rec.Blocks {
			seen[b] = true
		}
	}
	require.Len(t, lines, 120)
	require.Greater(t, shared, 100)
	require.GreaterOrEqual(t, sharedHits*10, shared*9, "rows opening with an earlier row's block hit the fake's prefix cache")
}

// TestTraceAzureFromItsCSV: the Azure conversation trace replays the same
// way, its format told by the file name.
func TestTraceAzureFromItsCSV(t *testing.T) {
	rep := runTraffic(t, capacity.Workload{Concurrency: 32},
		env{envTrace: azureTrace, envTraceSpeedUp: "1000", envTraceFirst: "60", envFakeProfile: "fast"})
	recs := traceRows(t, azureTrace, trace.First(60))
	require.Equal(t, 60, rep.Requests)
	require.Equal(t, "azure", rep.AnvilGo.Workload.Trace.Format)
	for _, d := range rep.AnvilGo.Requests {
		require.Equal(t, recs[d.RequestIndex].Line, *d.TraceLine)
		require.Equal(t, recs[d.RequestIndex].OutputTokens, *d.PlannedOutputTokens)
	}
}

// TestSessionsFromTheEnvironment: ANVIL_SESSIONS runs 3-turn sessions,
// the benchmark's Concurrency users at a time; the artifact reports the
// fake's cached tokens per turn, which grow with the history.
func TestSessionsFromTheEnvironment(t *testing.T) {
	rep := runTraffic(t, capacity.Workload{Concurrency: 2},
		env{envSessions: "turns=3,user=200,output=24,think=50ms", envSessionsCount: "4", envFakeProfile: "fast"})
	require.Equal(t, 12, rep.Requests)
	require.Zero(t, rep.Failed)
	w := rep.AnvilGo.Workload
	require.Equal(t, artifact.WorkloadSessions, w.Kind)
	require.Equal(t, "turns=3,user=200,output=24,think=50ms,think_dist=fixed,seed=0", *w.Sessions.Spec)
	require.Equal(t, 4, w.Sessions.Sessions)
	require.Equal(t, 2, *w.Sessions.Users)
	cached := map[string][]int{}
	for _, d := range rep.AnvilGo.Requests {
		require.Len(t, cached[*d.Session], *d.Turn-1, "session %s: turns in order", *d.Session)
		cached[*d.Session] = append(cached[*d.Session], *d.CachedPromptTokens)
	}
	require.Len(t, cached, 4)
	for s, c := range cached {
		require.Less(t, c[0], c[1], "session %s: turn 2 finds turn 1 in the cache", s)
		require.Less(t, c[1], c[2], "session %s: turn 3 finds turns 1 and 2", s)
	}
}

// TestTrafficErrors: conflicting or incomplete traffic variables, and a
// trace that cannot be read, fail with the variable named.
func TestTrafficErrors(t *testing.T) {
	for _, tc := range []struct {
		vars env
		want string
	}{
		{env{envTrace: mooncakeTrace, envSessions: "turns=2,user=10,output=8"}, "ANVIL_TRACE and ANVIL_SESSIONS are both set"},
		{env{envTraceSpeedUp: "10"}, "need ANVIL_TRACE"},
		{env{envSessionsCount: "3"}, "ANVIL_SESSIONS_COUNT needs ANVIL_SESSIONS"},
		{env{envTrace: "no-such-trace.jsonl"}, "ANVIL_TRACE: open no-such-trace.jsonl"},
		{env{envTrace: mooncakeTrace, envTraceWindow: "10h.."}, "no row to replay"},
		{env{envSessions: "recorded"}, "ANVIL_SESSIONS=recorded needs ANVIL_TRACE"},
		{env{envTrace: "testdata/sessions.jsonl", envSessions: "recorded", envSessionsCount: "2"}, "ANVIL_SESSIONS_COUNT counts synthetic sessions"},
		{env{envTrace: azureTrace, envSessions: "recorded"}, `ANVIL_SESSIONS=recorded: ANVIL_TRACE="` + azureTrace + `" (format azure) has no sessions: none of its 500 rows has a session key`},
		{env{envTrace: mooncakeTrace, envSessions: "recorded", envTraceFirst: "3"}, "(format mooncake) has no sessions: none of its 3 rows has a session key"},
		{env{envIgnoreEOS: "1"}, "ANVIL_IGNORE_EOS needs ANVIL_TRACE or ANVIL_SESSIONS"},
		{env{envTrace: mooncakeTrace, envRate: "5"}, "ANVIL_RATE with a trace or sessions"},
	} {
		s := newSettings([]Option{WithEnvironment(tc.vars.get)})
		w, err := s.applyWorkloadEnv(capacity.Workload{})
		require.NoError(t, err)
		_, _, err = s.applyTraffic(w)
		require.ErrorContains(t, err, tc.want, "%v", tc.vars)
	}
	for name, bad := range map[string]string{
		envTraceSpeedUp: "0", envTraceFirst: "0", envTraceWindow: "20s..10s", envTraceFormat: "parquet",
		envSessions: "turns=0,user=1,output=1", envSessionsCount: "0",
	} {
		_, err := readEnvironment(env{name: bad}.get)
		var ee *capacity.FieldError
		require.True(t, errors.As(err, &ee), "%s=%s: %v", name, bad, err)
		require.Equal(t, name, ee.Field)
	}
	_, err := readEnvironment(env{envTraceSpeedUp: "0"}.get)
	require.ErrorContains(t, err, "[0.001, 1e+06]", "the allowed range is named")
}

// TestWithTrafficWinsOverTheEnvironment: a Go value of traffic replaces
// the plan whatever ANVIL_TRACE says.
func TestWithTrafficWinsOverTheEnvironment(t *testing.T) {
	called := false
	s := newSettings([]Option{WithEnvironment(env{envTrace: "no-such-trace.jsonl"}.get),
		WithTraffic(trafficFunc(func(w capacity.Workload) capacity.Workload {
			called = true
			require.Zero(t, w.Requests+w.ContextTokens+w.Burst)
			require.Zero(t, w.Rate)
			require.Equal(t, 8, w.Concurrency)
			w.Requests = 3
			return w
		}))})
	w, replaced, err := s.applyTraffic(capacity.Workload{Requests: 50, ContextTokens: 4096, Rate: 5, Concurrency: 8})
	require.NoError(t, err)
	require.True(t, replaced)
	require.True(t, called)
	require.Equal(t, 3, w.Requests)
}

// trafficFunc adapts a function to the traffic WithTraffic takes.
type trafficFunc func(capacity.Workload) capacity.Workload

func (f trafficFunc) Workload(w capacity.Workload) capacity.Workload { return f(w) }

// TestRecordedSessionsFromTheEnvironment: ANVIL_SESSIONS=recorded runs
// the sessions of the ANVIL_TRACE file, turn by turn, with ignore_eos
// from ANVIL_IGNORE_EOS (which the fake takes); the artifact names the
// trace they came from.
func TestRecordedSessionsFromTheEnvironment(t *testing.T) {
	const file = "testdata/sessions.jsonl"
	rep := runTraffic(t, capacity.Workload{Concurrency: 4},
		env{envTrace: file, envSessions: "recorded", envIgnoreEOS: "1", envFakeProfile: "fast"})
	require.Equal(t, 6, rep.Requests)
	require.Zero(t, rep.Failed, "%+v", rep.Failures)
	w := rep.AnvilGo.Workload
	require.Equal(t, artifact.WorkloadSessions, w.Kind)
	require.Nil(t, w.Sessions.Spec, "recorded sessions have no spec")
	require.Equal(t, 2, w.Sessions.Sessions)
	require.Equal(t, fileSHA256(t, file), w.Trace.SHA256)
	turns := map[string][]int{}
	for _, d := range rep.AnvilGo.Requests {
		turns[*d.Session] = append(turns[*d.Session], *d.Turn)
		require.Equal(t, 20, *d.PlannedOutputTokens)
	}
	require.Equal(t, map[string][]int{"a": {1, 2, 3}, "b": {1, 2, 3}}, turns)
}

// TestIgnoreEOSFromTheEnvironment: ANVIL_IGNORE_EOS=1 makes a replay send
// ignore_eos and min_tokens; unset, it sends neither.
func TestIgnoreEOSFromTheEnvironment(t *testing.T) {
	for _, on := range []bool{true, false} {
		vars := env{envTrace: mooncakeTrace, envTraceFirst: "3"}
		if on {
			vars[envIgnoreEOS] = "1"
		}
		e, err := readEnvironment(vars.get)
		require.NoError(t, err)
		tr, err := e.traffic.resolve(capacity.Workload{}, func(err error) error { return err })
		require.NoError(t, err)
		replay, ok := tr.(traffic.Replay)
		require.True(t, ok, "%T", tr)
		require.Len(t, replay.Records, 3)
		require.Equal(t, on, replay.IgnoreEOS)
		req, err := replay.Request(t.Context(), 0)
		require.NoError(t, err)
		if on {
			require.JSONEq(t, "true", string(req.Body["ignore_eos"]))
			require.JSONEq(t, strconv.Itoa(replay.Records[0].OutputTokens), string(req.Body["min_tokens"]))
		} else {
			require.Nil(t, req.Body)
		}
	}
}

// TestReplayReportIsTheReplays: what the report says of a replay is the
// replay's, not the synthetic plan's: v1 max_tokens is the largest any
// replayed request was sent (each row's own output_length), and
// shared_prefix_tokens 0 (the rows share their blocks, not the Workload's
// prefix); the HTML header says each request's own max_tokens and the
// trace's blocks, where it said "max tokens 1024" and "shared prefix at
// most 915..8000 tokens".
func TestReplayReportIsTheReplays(t *testing.T) {
	rep := runTraffic(t, capacity.Workload{ContextTokens: 4096, Concurrency: 64, MaxTokens: 1024},
		env{envTrace: mooncakeTrace, envTraceSpeedUp: "100", envTraceFirst: "40", envFakeProfile: "fast"})
	recs := traceRows(t, mooncakeTrace, trace.First(40))
	lo, hi := recs[0].OutputTokens, 0
	for _, rec := range recs {
		lo, hi = min(lo, rec.OutputTokens), max(hi, rec.OutputTokens)
	}
	require.Equal(t, hi, rep.MaxTokens)
	require.Zero(t, rep.SharedPrefixTokens)
	var page strings.Builder
	require.NoError(t, reporters.WriteHTML(&page, rep))
	require.Contains(t, page.String(), fmt.Sprintf("each request&#39;s own: %d to %d, median", lo, hi))
	require.Contains(t, page.String(), "the trace&#39;s blocks: equal block ids are equal text")
	require.NotContains(t, page.String(), "max tokens</dt><dd>1024")
	require.NotContains(t, page.String(), "shared prefix at most")
}

// TestTraceOnTheDefaultFake: a newcomer's first replay, ANVIL_TRACE on the
// embedded fake with no profile named, runs on a non-reasoning profile:
// every one of Mooncake's first 60 rows succeeds, where the reasoning
// default ended 26 of them, shorter than its thought, with no visible
// content.
func TestTraceOnTheDefaultFake(t *testing.T) {
	rep := runTraffic(t, capacity.Workload{Concurrency: 16},
		env{envTrace: mooncakeTrace, envTraceSpeedUp: "1000", envTraceFirst: "60"})
	require.Equal(t, "anvil-fakeserver-"+replayFakeProfile, *rep.Engine)
	require.Equal(t, 60, rep.Completed, "failures: %+v", rep.Failures)
	require.Empty(t, rep.Failures)
}

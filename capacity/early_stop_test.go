package capacity

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
)

// statusServer answers every chat request with status and an OpenAI
// error body, counting them.
type statusServer struct {
	status int
	seen   atomic.Int32
}

func (s *statusServer) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	s.seen.Add(1)
	time.Sleep(50 * time.Millisecond)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(s.status)
	_, _ = fmt.Fprintf(w, `{"error":{"message":"the request exceeds the available context size","type":"exceed_context_size_error","code":%d}}`, s.status)
}

// TestEarlyStop: a run whose first earlyStopRequests requests all fail for
// a reason that will not change stops: the report of what ran is
// returned, the requests never sent are in anvil_go alone (not cancelled
// rows), and the error says why.
func TestEarlyStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &statusServer{status: http.StatusBadRequest}
		rep, err := Run(t.Context(), pipeTarget(t, h), Workload{Requests: 20, Concurrency: 1, ContextTokens: 512})
		require.ErrorIs(t, err, ErrStoppedEarly)
		require.ErrorContains(t, err, "the first 4 measured requests all failed")
		require.ErrorContains(t, err, "request 0: http_error")
		require.NotNil(t, rep)
		require.EqualValues(t, earlyStopRequests, h.seen.Load())
		require.Equal(t, 20, rep.Requests, "the plan is accounted for")
		require.Equal(t, 0, rep.Completed)
		require.Len(t, rep.Failures, earlyStopRequests, "no row for a request never sent")
		for _, f := range rep.Failures {
			require.Equal(t, artifact.FailureHTTPError, f.FailureClass)
		}
		require.False(t, rep.PerformanceEligible)
		run := rep.AnvilGo.Run
		require.Equal(t, earlyStopRequests, run.SentRequests)
		require.Equal(t, 20-earlyStopRequests, run.NeverSentRequests)
		require.True(t, run.Interrupted)
		require.NotNil(t, run.StopReason)
		require.Contains(t, *run.StopReason, "KeepGoing")
		never := 0
		for _, d := range rep.AnvilGo.Requests {
			if d.Outcome == artifact.OutcomeNeverSent {
				never++
			}
		}
		require.Equal(t, 20-earlyStopRequests, never)
		require.NoError(t, rep.Recompute(), "the report stays consistent")
	})
}

// TestEarlyStopInFlightFinish: at concurrency 3 the requests in flight
// when the rule fires finish; nothing more is sent.
func TestEarlyStopInFlightFinish(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &statusServer{status: http.StatusUnprocessableEntity}
		rep, err := Run(t.Context(), pipeTarget(t, h), Workload{Requests: 30, Concurrency: 3, ContextTokens: 512})
		require.ErrorIs(t, err, ErrStoppedEarly)
		sent := int(h.seen.Load())
		require.GreaterOrEqual(t, sent, earlyStopRequests)
		require.LessOrEqual(t, sent, earlyStopRequests+2)
		require.Len(t, rep.Failures, sent)
		require.Equal(t, 30-sent, rep.AnvilGo.Run.NeverSentRequests)
	})
}

// TestNoEarlyStop: the rule does not fire on failures that may change (a
// 429, a 503), after a success, or with KeepGoing.
func TestNoEarlyStop(t *testing.T) {
	for _, tt := range []struct {
		name   string
		status int
		w      Workload
	}{
		{"429 says try again", http.StatusTooManyRequests, Workload{}},
		{"503 may pass", http.StatusServiceUnavailable, Workload{}},
		{"KeepGoing", http.StatusBadRequest, Workload{KeepGoing: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := &statusServer{status: tt.status}
				w := tt.w
				w.Requests, w.Concurrency, w.ContextTokens = 8, 1, 512
				rep, err := Run(t.Context(), pipeTarget(t, h), w)
				require.NoError(t, err)
				require.EqualValues(t, 8, h.seen.Load())
				require.Len(t, rep.Failures, 8)
				require.Nil(t, rep.AnvilGo.Run.StopReason)
			})
		})
	}
	t.Run("a success first", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var n atomic.Int32
			bad := &statusServer{status: http.StatusBadRequest}
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if n.Add(1) == 1 {
					(&sleepyStream{d: time.Millisecond}).ServeHTTP(w, r)
					return
				}
				bad.ServeHTTP(w, r)
			})
			rep, err := Run(t.Context(), pipeTarget(t, h), Workload{Requests: 8, Concurrency: 1, ContextTokens: 512})
			require.NoError(t, err)
			require.Equal(t, 1, rep.Completed)
			require.Len(t, rep.Failures, 7)
		})
	})
}

// TestEarlyStopOnTruncation: prompts the server truncated (usage far below
// the plan) are a reason that will not change.
func TestEarlyStopOnTruncation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var seen atomic.Int32
		h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			seen.Add(1)
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}\n\n"+
				"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":1,\"total_tokens\":11}}\n\n"+
				"data: [DONE]\n\n")
		})
		rep, err := Run(t.Context(), pipeTarget(t, h), Workload{Requests: 10, Concurrency: 1, ContextTokens: 4096})
		require.ErrorIs(t, err, ErrStoppedEarly, "%+v", rep.Failures)
		require.ErrorContains(t, err, "prompt truncated")
		require.EqualValues(t, earlyStopRequests, seen.Load())
		require.Equal(t, client.ErrorTypePromptTruncated, rep.Failures[0].ErrorType)
	})
}

package capacity

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// TestRunCancelDuringWarmup: a run cancelled while warming up reports every
// planned measured request as cancelled, never sent, whatever the warm-up
// had dispatched.
func TestRunCancelDuringWarmup(t *testing.T) {
	for _, w := range []Workload{
		{Requests: 5, Concurrency: 2, Warmup: 4, ContextTokens: 512},
		{Duration: time.Second, Concurrency: 2, Warmup: 4, ContextTokens: 512},
	} {
		synctest.Test(t, func(t *testing.T) {
			h := &sleepyStream{d: 10 * time.Millisecond}
			ctx, cancel := context.WithCancel(t.Context())
			time.AfterFunc(15*time.Millisecond, cancel) // during the second warm-up round
			rep, err := Run(ctx, pipeTarget(t, h), w)
			require.NoError(t, err)
			require.EqualValues(t, 4, h.seen.Load(), "warm-up requests only")
			require.Empty(t, rep.RequestTimings)
			require.Equal(t, rep.Requests, rep.Failed, "every attempted request is accounted for")
			want := 5
			if w.Duration > 0 {
				want = 1 // a campaign records the request it would have sent next
			}
			require.Equal(t, want, rep.Requests)
			for i, f := range rep.Failures {
				require.Equal(t, i, f.RequestIndex)
				require.Equal(t, artifact.FailureCancelled, f.FailureClass)
				require.Equal(t, "run cancelled before the request was sent", f.ErrorMessage)
			}
			require.False(t, rep.PerformanceEligible)
		})
	}
}

// TestRunProbeTimeout: an endpoint that never answers GET /models cannot
// hold Run: the probe is bounded by Workload.Timeout.
func TestRunProbeTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hang := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
		tg := Target{BaseURL: "http://hang.invalid/v1", HTTPClient: wiretest.Serve(t, hang), MetricsURL: "off"}
		start := time.Now()
		rep, err := Run(t.Context(), tg, Workload{Requests: 1, Timeout: 5 * time.Second})
		require.Nil(t, rep)
		require.Error(t, err)
		require.Equal(t, 5*time.Second, time.Since(start))
		require.Equal(t, "capacity: model probe GET http://hang.invalid/v1/models: timed out (no answer within Workload.Timeout = 5s:"+
			" the server took the request and sent nothing; is it serving, and is Target.BaseURL its API root?)"+
			" (declare the model and its context window, Target.Model and Target.MaxModelLen, and the run goes on without this answer)", err.Error())
	})
}

// (an Authorization header instead of APIKeyEnv, an API-key header) are
// scrubbed like the bearer token when a server echoes them; other header
// values are left alone.
// hangAfter answers with write, flushes, then keeps the response open until
// the client gives up.
func hangAfter(write func(http.ResponseWriter, *http.Request)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		write(w, r)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
}

// TestRunDoneThenHang: a server that sends [DONE] and then keeps the
// response open (no end of the body) does not hold the worker: the request
// succeeds at [DONE] and the next one is sent after a short grace, not
// after Workload.Timeout.
func TestRunDoneThenHang(t *testing.T) {
	hang := hangAfter(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		wiretest.WriteOKStream(w, raw)
	})
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		rep, err := Run(t.Context(), pipeTarget(t, hang), Workload{Requests: 3, Concurrency: 1, ContextTokens: 512, Timeout: time.Minute})
		require.NoError(t, err)
		require.Equal(t, 3, rep.Completed, "failures: %+v", rep.Failures)
		require.Equal(t, 3*client.BodyEndGrace, time.Since(start))
		for _, row := range rep.RequestTimings {
			require.Zero(t, row.E2EMS, "e2e ends at [DONE]")
		}
	})
}

// TestRunErrorBodyThenHang: an error status whose body never ends is an
// http_error (or a Content-Type failure) quoting what arrived, known at the
// headers, and holds its worker only client.BodyEndGrace.
func TestRunErrorBodyThenHang(t *testing.T) {
	for _, tc := range []struct {
		status      int
		contentType string
		class       artifact.FailureClass
		message     string
	}{
		{http.StatusServiceUnavailable, "application/json", artifact.FailureHTTPError, `HTTP 503 Service Unavailable: {"error": "overloaded`},
		{http.StatusOK, "application/json", artifact.FailureStreamValidation, `Content-Type "application/json" is not text/event-stream: {"error": "overloaded`},
	} {
		hang := hangAfter(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", tc.contentType)
			w.WriteHeader(tc.status)
			_, _ = io.WriteString(w, `{"error": "overloaded`)
		})
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			rep, err := Run(t.Context(), pipeTarget(t, hang), Workload{Requests: 2, Concurrency: 1, ContextTokens: 512, Timeout: time.Minute})
			require.NoError(t, err)
			require.Equal(t, 2*client.BodyEndGrace, time.Since(start))
			require.Len(t, rep.Failures, 2)
			for _, f := range rep.Failures {
				require.Equal(t, tc.class, f.FailureClass)
				require.Equal(t, tc.status, *f.HTTPStatus)
				require.Equal(t, tc.message, f.ErrorMessage)
				require.Equal(t, client.MS(client.BodyEndGrace), f.ElapsedMS)
			}
		})
	}
}

// TestRunRedirectNotFollowed: Run's default client (Target.HTTPClient nil)
// does not follow a redirect, which would add a round trip to every
// measured time: the request fails and names the Location. (A loopback
// server: the default client dials for real.)
func TestRunRedirectNotFollowed(t *testing.T) {
	var seen atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/chat/completions" { // not the discovery's or the connection warm-up's
			seen.Add(1)
		}
		http.Redirect(w, r, "/v2/chat/completions?sig=s3cr3t", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	rep, err := Run(t.Context(), Target{BaseURL: srv.URL + "/v1", Model: "m", MaxModelLen: 8192, MetricsURL: "off"}, Workload{Requests: 1, ContextTokens: 512})
	require.NoError(t, err)
	require.EqualValues(t, 1, seen.Load(), "no second chat request")
	require.Len(t, rep.Failures, 1)
	f := rep.Failures[0]
	require.Equal(t, artifact.FailureStreamValidation, f.FailureClass)
	require.Equal(t, http.StatusTemporaryRedirect, *f.HTTPStatus)
	require.Contains(t, f.ErrorMessage, "unexpected HTTP status 307 Temporary Redirect for a streamed request: redirected to /v2/chat/completions (not followed; set Target.BaseURL to the final URL)")
	require.NotContains(t, f.ErrorMessage, "s3cr3t", "the Location is shown without its query")
}

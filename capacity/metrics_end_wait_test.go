package capacity_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// TestMetricsHungEndBounded: at ANVIL_METRICS_INTERVAL=1h (or 1m), a
// /metrics that stops answering once the measured phase starts delays
// the end of the run by 2 s, the sampler's bound on a GET on the run's
// goroutine, not by a quarter of the interval (15 min at 1 h): the same
// run against a /metrics that keeps answering ends 2 s sooner, and the
// last sample is counted failed.
func TestMetricsHungEndBounded(t *testing.T) {
	for _, interval := range []time.Duration{time.Hour, time.Minute} {
		t.Run(interval.String(), func(t *testing.T) {
			var took [2]time.Duration
			for i, hangs := range []bool{false, true} {
				synctest.Test(t, func(t *testing.T) {
					fake := fakeserver.NewInMemory(fakeserver.Fast())
					defer fake.Close()
					var measuring atomic.Bool
					hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
						if strings.HasSuffix(r.URL.Path, "/chat/completions") {
							measuring.Store(true)
						}
						if hangs && measuring.Load() && r.URL.Path == "/metrics" {
							<-r.Context().Done()
							return nil, r.Context().Err()
						}
						return fake.Client().Transport.RoundTrip(r)
					})}
					t0 := time.Now()
					rep, err := capacity.Run(t.Context(), capacity.Target{BaseURL: fake.BaseURL(), HTTPClient: hc, MetricsInterval: interval},
						capacity.Workload{Requests: 8, Concurrency: 2, ContextTokens: 256})
					require.NoError(t, err)
					require.Equal(t, 8, rep.Completed)
					took[i] = time.Since(t0)
					m := rep.AnvilGo.ServerMetrics
					require.NotNil(t, m)
					if hangs {
						require.Equal(t, 1, m.Failed, "the last sample, cut at its bound")
					} else {
						require.Zero(t, m.Failed)
					}
				})
			}
			// The bound, give or take the few milliseconds the order of the
			// run's goroutines may move the fake's answers.
			require.InDelta(t, 2*time.Second, took[1]-took[0], float64(100*time.Millisecond), "the hung /metrics delays the end by the bound, not interval/4")
		})
	}
}

// roundTripFunc is an http.RoundTripper of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

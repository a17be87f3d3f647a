package servermetrics

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/stretchr/testify/require"
)

// TestObserver: on the observer seam the sampler starts at the phase's
// start and its end hook sets anvil_go.server_metrics with the checks
// computed from the report.
func TestObserver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := Discover(t.Context(), Config{URL: "http://h/metrics", Client: handlerClient(&counterServer{})})
		require.NoError(t, err)
		end := s.Start(t.Context(), time.Now())
		time.Sleep(1500 * time.Millisecond)
		rep := &artifact.Report{MaxTokens: 64, WallClockMS: 1500, RequestTimings: []artifact.TimingRow{
			{OutputTokens: new(12), TimeToFirstOutputMS: 5}, {OutputTokens: new(8), TimeToFirstOutputMS: 7},
		}}
		end(rep)
		m := rep.AnvilGo.ServerMetrics
		require.NotNil(t, m)
		require.Equal(t, 3, m.Samples, "at 0, 1000 and at the end, 1500")
		require.Equal(t, "exact", m.Checks.GenerationTokens.Verdict, "the counter rose by 20: 110, 120, 130")
		require.Nil(t, m.Checks.TTFT, "no histogram on this server")
	})
	var none *Sampler
	require.Nil(t, none.Start(context.Background(), time.Now()), "no sampler, nothing to end")
	none.Prime(context.Background()) // nothing to prime
}

// clockCounter serves a vLLM-named body whose generation-token counter
// rises with the bubble's clock, 1 token a millisecond since t0, whether
// or not a run is measuring: a counter that keeps rising after the phase.
type clockCounter struct {
	t0    time.Time
	calls atomic.Int32
	hang  atomic.Bool // hold every GET until its context ends
}

func (c *clockCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.calls.Add(1)
	if c.hang.Load() {
		<-r.Context().Done()
		return
	}
	fmt.Fprintf(w, "# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total{engine=\"0\"} %d\n",
		time.Since(c.t0).Milliseconds())
}

// TestFinishAtPhaseEnd: the last sample is taken by Finish, at the phase's
// end: its offset is the phase's end, the counter's increase stops there
// although the counter keeps rising until the end hook runs, and the end
// hook samples nothing more; the generation-token check compares exactly
// the phase's tokens.
func TestFinishAtPhaseEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &clockCounter{t0: time.Now()}
		s, err := Discover(t.Context(), Config{URL: "http://h/metrics", Client: handlerClient(srv)})
		require.NoError(t, err)
		time.Sleep(2 * time.Second) // warm-up: the counter rises, unsampled
		s.Prime(t.Context())
		runStart := time.Now()
		end := s.Start(t.Context(), runStart)
		time.Sleep(2500 * time.Millisecond)
		phase := time.Since(runStart)
		s.Finish()
		require.Zero(t, time.Since(runStart)-phase, "the last GET takes no time on this handler")
		calls := srv.calls.Load()
		s.Finish()                  // a second Finish samples nothing
		time.Sleep(7 * time.Second) // the report's assembly, and later: the counter still rises
		rep := &artifact.Report{MaxTokens: 4000, WallClockMS: 2500, RequestTimings: []artifact.TimingRow{
			{OutputTokens: new(1000), TimeToFirstOutputMS: 5}, {OutputTokens: new(1500), TimeToFirstOutputMS: 7},
		}}
		end(rep)
		require.Equal(t, calls, srv.calls.Load(), "neither the second Finish nor the end hook samples")
		m := rep.AnvilGo.ServerMetrics
		require.Len(t, m.Series, 1)
		g := m.Series[0]
		require.Equal(t, []float64{0, 1000, 2000, 2500}, g.OffsetsMS, "the last point is the phase's end")
		require.Equal(t, []float64{2000, 3000, 4000, 4500}, g.Values)
		require.Equal(t, 2500.0, *g.Increase, "the increase stops at the phase's end")
		require.Equal(t, 4, m.Samples)
		require.Equal(t, "exact", m.Checks.GenerationTokens.Verdict, "%+v", m.Checks.GenerationTokens)
		require.Same(t, m, s.Stop(), "Stop returns the member the end hook wrote")
	})
}

// TestFinishWithinTimeout: a last GET that never answers ends within the
// sampler's own timeout (a quarter of the interval by default), counted
// as a failure, and the member still has the points taken before.
func TestFinishWithinTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &clockCounter{t0: time.Now()}
		s, err := Discover(t.Context(), Config{URL: "http://h/metrics", Client: handlerClient(srv)})
		require.NoError(t, err)
		runStart := time.Now()
		s.Start(t.Context(), runStart)
		time.Sleep(1500 * time.Millisecond)
		srv.hang.Store(true)
		s.Finish()
		require.Equal(t, 250*time.Millisecond, time.Since(runStart)-1500*time.Millisecond,
			"the last GET is cut at Config.Timeout = Interval/4")
		m := s.Stop()
		require.Equal(t, 2, m.Samples)
		require.Equal(t, 1, m.Failed)
		require.Contains(t, *m.LastError, "deadline exceeded")
		require.Equal(t, []float64{0, 1000}, m.Series[0].OffsetsMS)
	})
}

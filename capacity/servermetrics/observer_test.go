package servermetrics

import (
	"context"
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

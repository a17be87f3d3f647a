package capacity

import (
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/probe"
	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// TestRunProbeRequests: probe requests beside a closed loop leave its
// measured requests, their rows and metrics exactly as they are without
// them, and report their own latency; their count is the Poisson draws
// that fall inside the phase.
func TestRunProbeRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		run := func(rate float64) (*artifact.Report, *sleepyStream) {
			h := &sleepyStream{d: 100 * time.Millisecond}
			rep, err := Run(t.Context(), pipeTarget(t, h), Workload{Requests: 200, Concurrency: 4, ContextTokens: 256, ProbeRate: rate, Seed: 7})
			require.NoError(t, err)
			return rep, h
		}
		plain, _ := run(0)
		probed, h := run(2)
		require.Nil(t, plain.AnvilGo.ProbeRequests)

		require.Equal(t, plain.Requests, probed.Requests)
		require.Equal(t, plain.Completed, probed.Completed)
		require.Equal(t, plain.WallClockMS, probed.WallClockMS)
		require.Equal(t, plain.AnvilGo.Run.SentRequests, probed.AnvilGo.Run.SentRequests)
		require.Equal(t, plain.Metrics, probed.Metrics, "the closed loop's metrics are its own")
		require.Equal(t, plain.RequestTimings, probed.RequestTimings)
		// Which request dials a new connection is the scheduler's choice
		// (the client's pool is not warmed up with a Target.HTTPClient):
		// the phases are left out.
		withoutPhases := func(ds []artifact.RequestDetail) []artifact.RequestDetail {
			out := make([]artifact.RequestDetail, len(ds))
			for i, d := range ds {
				d.Phases = nil
				out[i] = d
			}
			return out
		}
		require.Equal(t, withoutPhases(plain.AnvilGo.Requests), withoutPhases(probed.AnvilGo.Requests), "no probe is a measured request")
		require.Equal(t, plain.AnvilGo.Steady.Reason, probed.AnvilGo.Steady.Reason)

		pr := probed.AnvilGo.ProbeRequests
		require.NotNil(t, pr)
		// The draws of the probes' generator that fall inside the phase
		// (200 requests of 100 ms, 4 at a time: 5 s).
		rng := rand.New(rand.NewPCG(7, probe.SeedStream))
		want, at := 0, 0.0
		for {
			at += rng.ExpFloat64() / 2
			if at*1000 >= probed.WallClockMS {
				break
			}
			want++
		}
		require.Equal(t, 5000.0, probed.WallClockMS)
		require.Equal(t, want, pr.Sent)
		require.Greater(t, pr.Sent, 5)
		require.Equal(t, pr.Sent, pr.Succeeded+pr.Cancelled)
		require.Zero(t, pr.Failed)
		require.Nil(t, pr.FirstError)
		require.Equal(t, 2.0, pr.RateRPS)
		require.Equal(t, 1, pr.MaxTokens)
		require.Equal(t, 100.0, pr.TTFOMS.P50, "a probe waits the server's 100 ms like any request")
		require.Equal(t, 100.0, pr.E2EMS.Max)
		require.EqualValues(t, 200+pr.Sent, h.seen.Load(), "the server saw the probes")
		require.Equal(t, 3*pr.Reported, pr.CompletionTokens)
	})
}

// TestRunProbeRequestsCountedByTheServer: the server's generation-token
// counter counts the probes' tokens, and the cross-check counts them on
// the client's side too (against the fake, exactly).
func TestRunProbeRequestsCountedByTheServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fakeserver.NewInMemory(fakeserver.Fast())
		defer srv.Close()
		rep, err := Run(t.Context(), Target{BaseURL: srv.URL + "/v1", HTTPClient: srv.Client()},
			Workload{Requests: 200, Concurrency: 4, ContextTokens: 256, MaxTokens: 64, ProbeRate: 10})
		require.NoError(t, err)
		pr := rep.AnvilGo.ProbeRequests
		require.Positive(t, pr.Succeeded)
		require.Equal(t, pr.Reported, pr.CompletionTokens, "one token each")
		tokens, _ := rep.CompletionTokens()
		g := rep.AnvilGo.ServerMetrics.Checks.GenerationTokens
		require.Equal(t, tokens+pr.CompletionTokens, g.ClientTokens)
		require.Contains(t, []string{"exact", "agree"}, g.Verdict, "%v", g.Reason)
	})
}

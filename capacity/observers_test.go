package capacity_test

import (
	"cmp"
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/servermetrics"
	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// TestObserversOnTheSeam: every run samples the server's metrics and
// audits itself, on the run-observer seam. Against the fake with 4 slots
// at concurrency 8 (a plain Run, the endpoint found at the default
// /metrics): the sampled gauges read 4 running and 4 waiting while the
// run still dispatches, the generation-token check is exact, the server's
// mean TTFT is the client's (nothing between them in memory), the audit is
// recorded, and the same run with the sampler off has exactly the same
// request timings.
func TestObserversOnTheSeam(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const service = 100 * time.Millisecond
		cfg, err := fakeserver.Slots(4, service)
		require.NoError(t, err)
		srv := fakeserver.NewInMemory(cfg)
		defer srv.Close()

		w := capacity.Workload{Requests: 48, Concurrency: 8, ContextTokens: 256}
		rep, err := capacity.Run(t.Context(), capacity.Target{BaseURL: srv.BaseURL(), HTTPClient: srv.Client(),
			MetricsInterval: 37 * time.Millisecond}, w)
		require.NoError(t, err)
		require.Equal(t, 48, rep.Completed, "failures: %+v", rep.Failures)

		m := rep.AnvilGo.ServerMetrics
		require.NotNil(t, m)
		require.Zero(t, m.Failed)
		steady := float64(11 * service / time.Millisecond) // the last 4 waiting leave at 1100 ms
		for _, s := range m.Series {
			if s.Name != "vllm:num_requests_running" && s.Name != "vllm:num_requests_waiting" {
				continue
			}
			n := 0
			for i, at := range s.OffsetsMS {
				if at > 0 && at < steady {
					require.Equal(t, 4.0, s.Values[i], "%s at %v ms", s.Name, at)
					n++
				}
			}
			require.Equal(t, int(steady/37), n, s.Name)
		}
		g := m.Checks.GenerationTokens
		require.Equal(t, "exact", g.Verdict, "%+v", g)
		require.Equal(t, float64(48*cfg.AnswerTokens.Max), g.ServerIncrease)
		require.Equal(t, 48.0, m.Checks.TTFT.ServerRequests)
		require.InDelta(t, 0, m.Checks.TTFT.NetworkAndClientMS, 1e-6)

		a := rep.AnvilGo.Audit
		require.NotNil(t, a)
		require.Contains(t, []string{"ok", "suspect"}, a.Verdict)
		require.Nil(t, a.SendLagP99MS, "a closed loop")

		// The same run with the sampler off: the same timings, exactly.
		bare, err := capacity.Run(t.Context(), capacity.Target{BaseURL: srv.BaseURL(), HTTPClient: srv.Client(),
			MetricsURL: servermetrics.Off}, w)
		require.NoError(t, err)
		require.Nil(t, bare.AnvilGo.ServerMetrics)
		require.NotNil(t, bare.AnvilGo.Audit, "the audit is always on")
		require.Equal(t, timings(rep), timings(bare), "the sampler changes no request's timing")
	})
}

// timings are a report's (TTFT, E2E) pairs, sorted.
func timings(r *artifact.Report) [][2]float64 {
	var out [][2]float64
	for _, row := range r.RequestTimings {
		out = append(out, [2]float64{row.TTFTMS, row.E2EMS})
	}
	slices.SortFunc(out, func(a, b [2]float64) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	return out
}

var _ capacity.Finisher = (*afterPhase)(nil)

// afterPhase is a Workload.Observers entry that is a Finisher: it records when
// Run called it and, there, sends the fake one more request (tokens the
// server's counter counts after the measured phase) and lets time pass.
type afterPhase struct {
	client   *http.Client
	url      string
	at       time.Time
	finished time.Time
	err      error
}

func (a *afterPhase) Start(_ context.Context, at time.Time) func(*artifact.Report) {
	a.at = at
	return nil
}

func (a *afterPhase) Finish() {
	a.finished = time.Now()
	resp, err := a.client.Post(a.url, "application/json",
		strings.NewReader(`{"messages":[{"role":"user","content":"after the phase"}],"stream":true}`))
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	a.err = err
	time.Sleep(3 * time.Second)
}

// TestMetricsLastSampleAtPhaseEnd: the sampler's last sample is taken
// when the measured phase ends, before any later Finish and before the
// report is assembled: every series' last offset is wall_clock_ms, and
// the tokens a request sent after the phase generates (from a
// Workload.Observers entry's Finish, which Run calls after the built-in
// ones) are not in the counter's increase, so the check stays exact.
func TestMetricsLastSampleAtPhaseEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg, err := fakeserver.Slots(2, 50*time.Millisecond)
		require.NoError(t, err)
		srv := fakeserver.NewInMemory(cfg)
		defer srv.Close()
		after := &afterPhase{client: srv.Client(), url: srv.BaseURL() + "/chat/completions"}
		w := capacity.Workload{Requests: 8, Concurrency: 2, ContextTokens: 256, Observers: []capacity.Observer{after}}
		rep, err := capacity.Run(t.Context(), capacity.Target{BaseURL: srv.BaseURL(), HTTPClient: srv.Client(),
			MetricsInterval: 70 * time.Millisecond}, w)
		require.NoError(t, err)
		require.NoError(t, after.err)
		require.Equal(t, 8, rep.Completed, "failures: %+v", rep.Failures)
		require.Equal(t, rep.WallClockMS, float64(after.finished.Sub(after.at))/1e6,
			"a user observer's Finish is called at the phase's end")

		m := rep.AnvilGo.ServerMetrics
		require.NotNil(t, m)
		require.Zero(t, m.Failed)
		require.NotEmpty(t, m.Series)
		for _, s := range m.Series {
			require.Equal(t, rep.WallClockMS, s.OffsetsMS[len(s.OffsetsMS)-1], "%s: the last point is the phase's end", s.Name)
		}
		g := m.Checks.GenerationTokens
		require.Equal(t, "exact", g.Verdict, "%+v", g)
		require.Equal(t, float64(8*cfg.AnswerTokens.Max), g.ServerIncrease, "the request after the phase is not counted")
	})
}

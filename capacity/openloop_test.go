package capacity

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/arrival"
	"github.com/anvilbench/anvil/capacity/internal/wiretest"
	"github.com/anvilbench/anvil/stats"
)

// arrivalLog is a server (not the fake) that logs the instant each chat
// request arrives and answers it after service with writeOKStream.
type arrivalLog struct {
	service time.Duration
	mu      sync.Mutex
	at      []time.Time
}

func (a *arrivalLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	a.mu.Lock()
	a.at = append(a.at, now)
	a.mu.Unlock()
	raw, _ := io.ReadAll(r.Body)
	if a.service > 0 {
		select {
		case <-time.After(a.service):
		case <-r.Context().Done():
			return
		}
	}
	wiretest.WriteOKStream(w, raw)
}

// offsets returns the arrivals as offsets from start, in arrival order.
func (a *arrivalLog) offsets(start time.Time) []time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]time.Duration, len(a.at))
	for i, t := range a.at {
		out[i] = t.Sub(start)
	}
	slices.Sort(out)
	return out
}

// intervalCV is the coefficient of variation of the intervals between
// consecutive offsets.
func intervalCV(offsets []time.Duration) float64 {
	gaps := make([]float64, 0, len(offsets)-1)
	for i := 1; i < len(offsets); i++ {
		gaps = append(gaps, float64(offsets[i]-offsets[i-1]))
	}
	s := stats.Summarize(gaps)
	return s.Stddev / s.Mean
}

func msOf(d time.Duration) float64 { return float64(d) / 1e6 }

// TestOpenLoopArrivals is the acceptance test of the arrival processes: a
// server that logs arrival times sees the process asked for. Over 300
// requests at 50/s the inter-arrival CV is in 0.8..1.25 for Poisson, under
// 0.15 for constant (0: exact intervals of 20 ms) and in 1.6..2.4 for gamma
// with burstiness 0.25, whose CV is 1/sqrt(0.25) = 2. Over 2,000 seeds the
// sample CV of 299 intervals has mean 0.996 and standard deviation 0.056
// for Poisson (no seed outside its band) and mean 1.98 and standard
// deviation 0.17 for gamma (2.2% of seeds outside 1.6..2.4, about 2.3
// standard deviations); the seed here is fixed, so the test is
// deterministic. Under fake time every request arrives exactly
// at its scheduled offset from the run's start, so the p95 deviation is 0,
// well within 5 ms; and the artifact records both clocks exactly.
func TestOpenLoopArrivals(t *testing.T) {
	for _, tc := range []struct {
		arrival    ArrivalProcess
		burstiness float64
		cvLo, cvHi float64
		wantBurst  *float64
	}{
		{arrivalPoisson, 0, 0.8, 1.25, ptr(1.0)},
		{arrivalConstant, 0, 0, 0.15, nil},
		{arrivalGamma, 0.25, 1.6, 2.4, ptr(0.25)},
	} {
		t.Run(string(tc.arrival), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const n, rate, seed = 300, 50.0, 11
				h := &arrivalLog{service: 5 * time.Millisecond}
				w := Workload{Requests: n, Concurrency: 64, ContextTokens: 512, Seed: seed,
					Rate: rate, Arrival: tc.arrival, Burstiness: tc.burstiness}
				rep, err := Run(t.Context(), pipeTarget(t, h), w)
				require.NoError(t, err)
				require.Equal(t, n, rep.Completed, "failures: %+v", rep.Failures)

				want, err := arrival.Schedule(arrival.Spec{Process: arrival.Name(tc.arrival), Rate: rate, Burstiness: tc.burstiness, Seed: seed}, n)
				require.NoError(t, err)
				got := h.offsets(time.Unix(0, rep.StartedAtUnixNS))
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("arrival offsets from the run's start (-scheduled +arrived):\n%s", diff)
				}
				devs := make([]float64, n)
				for i := range got {
					devs[i] = math.Abs(msOf(got[i] - want[i]))
				}
				require.Equal(t, 0.0, stats.Summarize(devs).P95, "p95 deviation from the schedule, ms")
				cv := intervalCV(got)
				t.Logf("%s: inter-arrival CV %.3f over %d intervals", tc.arrival, cv, n-1)
				require.GreaterOrEqual(t, cv, tc.cvLo, "inter-arrival CV")
				require.LessOrEqual(t, cv, tc.cvHi, "inter-arrival CV")

				x := rep.AnvilGo
				offered := arrival.Offered(want)
				if diff := cmp.Diff(&artifact.Arrival{
					Process: string(tc.arrival), RateRPS: rate, Burstiness: tc.wantBurst, Seed: seed,
					OfferedRPS: &offered, AchievedRPS: &offered, MaxInFlight: 64,
				}, x.Arrival, cmpopts.IgnoreUnexported(artifact.Arrival{})); diff != "" {
					t.Fatalf("anvil_go.arrival (-want +got):\n%s", diff)
				}
				require.Len(t, x.Requests, n)
				for i, d := range x.Requests {
					require.Equal(t, msOf(want[i]), *d.ScheduledMS, "request %d scheduled_ms", i)
					require.Equal(t, *d.ScheduledMS, *d.SentMS, "request %d is sent when due", i)
					require.Equal(t, 0.0, *d.QueueMS, "request %d never waits for the cap", i)
					row := rep.RequestTimings[i]
					require.Equal(t, row.TTFTMS, *d.ScheduledTTFTMS, "request %d: no queue, both clocks agree", i)
					require.Equal(t, 5.0, row.E2EMS)
				}
			})
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestOpenLoopCapped is the capped open loop: 2 in flight, 100/s offered
// (constant: one request every 10 ms) and a 30 ms service. The server
// completes two requests per 30 ms, so requests leave in pairs 30 ms apart
// (at 0, 10, 30, 40, 60, 70, ... ms): request i is sent at
// 30*floor(i/2) + 10*(i%2) ms and waits 10*floor(i/2) ms for the cap. The
// achieved rate, 39 intervals over the last send at 580 ms, is 67.2/s,
// below the 100/s offered; the scheduled clock charges the wait.
func TestOpenLoopCapped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 40
		h := &arrivalLog{service: 30 * time.Millisecond}
		rep, err := Run(t.Context(), pipeTarget(t, h), Workload{
			Requests: n, Concurrency: 2, ContextTokens: 512, Rate: 100, Arrival: arrivalConstant,
		})
		require.NoError(t, err)
		require.Equal(t, n, rep.Completed)
		a := rep.AnvilGo.Arrival
		require.Equal(t, 100.0, *a.OfferedRPS)
		require.Equal(t, 39/0.58, *a.AchievedRPS)
		require.Less(t, *a.AchievedRPS, *a.OfferedRPS)
		require.Equal(t, 2, a.MaxInFlight)
		require.Nil(t, a.Burstiness, "constant arrivals have no burstiness")
		for i, d := range rep.AnvilGo.Requests {
			sent := float64(30*(i/2) + 10*(i%2))
			require.Equal(t, float64(10*i), *d.ScheduledMS, "request %d", i)
			require.Equal(t, sent, *d.SentMS, "request %d", i)
			require.Equal(t, float64(10*(i/2)), *d.QueueMS, "request %d", i)
			require.Equal(t, 30.0, rep.RequestTimings[i].E2EMS, "request %d: the v1 row is measured from the send", i)
			require.Equal(t, 30+*d.QueueMS, *d.ScheduledE2EMS, "request %d: the scheduled clock includes the wait", i)
		}
		got := h.offsets(time.Unix(0, rep.StartedAtUnixNS))
		require.Equal(t, 580*time.Millisecond, got[n-1], "the server sees the capped sends")
		require.Equal(t, 610.0, rep.WallClockMS)
	})
}

// TestOpenLoopDuration: with Duration the schedule is the requests due
// before it, all of which are sent and accounted for; the count is fixed
// before the run (20 at 10/s over 2 s: offsets 0..1.9 s).
func TestOpenLoopDuration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &arrivalLog{service: 250 * time.Millisecond}
		rep, err := Run(t.Context(), pipeTarget(t, h), Workload{
			Duration: 2 * time.Second, Concurrency: 4, ContextTokens: 512, Rate: 10, Arrival: arrivalConstant,
		})
		require.NoError(t, err)
		require.Equal(t, 20, rep.Requests)
		require.Equal(t, 20, rep.Completed)
		require.True(t, rep.PerformanceEligible)
		require.Equal(t, 1900.0, *rep.AnvilGo.Requests[19].ScheduledMS)
		require.Equal(t, 2150.0, rep.WallClockMS)
	})
}

// TestOpenLoopCancel: cancelling an open loop stops it at once; the
// requests in flight and every scheduled request not yet sent are
// cancelled failures, the latter never_sent in anvil_go.
func TestOpenLoopCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &arrivalLog{service: 50 * time.Millisecond}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		time.AfterFunc(1025*time.Millisecond, cancel)
		rep, err := Run(ctx, pipeTarget(t, h), Workload{
			Requests: 40, Concurrency: 8, ContextTokens: 512, Rate: 10, Arrival: arrivalConstant,
		})
		require.NoError(t, err)
		require.Equal(t, 40, rep.Requests)
		require.Equal(t, 10, rep.Completed, "requests 0..9 finished by 0.95 s")
		require.Equal(t, 30, rep.Failed)
		require.Equal(t, 11, rep.AnvilGo.Run.SentRequests, "request 10 was in flight")
		require.Equal(t, 29, rep.AnvilGo.Run.NeverSentRequests)
		require.True(t, rep.AnvilGo.Run.Interrupted)
		require.Equal(t, artifact.OutcomeNeverSent, rep.AnvilGo.Requests[39].Outcome)
	})
}

// TestOpenLoopMaxFailures: MaxFailures stops the schedule at once, even
// while the dispatcher waits for a later due time, and the report accounts
// for what was dispatched.
func TestOpenLoopMaxFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
		})
		rep, err := Run(t.Context(), pipeTarget(t, h), Workload{
			Requests: 100, Concurrency: 4, ContextTokens: 512, Rate: 1, Arrival: arrivalConstant, MaxFailures: 3,
		})
		require.NoError(t, err)
		require.Equal(t, 3, rep.Requests)
		require.Equal(t, 3, rep.Failed)
		require.Equal(t, 2*time.Second, time.Since(start), "the run ends with the third failure, not at the next due time")
	})
}

// TestOpenLoopConfig: each bad open-loop field is a FieldError naming it.
func TestOpenLoopConfig(t *testing.T) {
	for _, tc := range []struct {
		name  string
		w     Workload
		field string
	}{
		{"negative rate", Workload{Rate: -1}, "Workload.Rate"},
		{"rate below min", Workload{Rate: minRate / 2}, "Workload.Rate"},
		{"rate above max", Workload{Rate: maxRate * 2}, "Workload.Rate"},
		{"NaN rate", Workload{Rate: math.NaN()}, "Workload.Rate"},
		{"infinite rate", Workload{Rate: math.Inf(1)}, "Workload.Rate"},
		{"arrival without rate", Workload{Arrival: arrivalPoisson}, "Workload.Arrival"},
		{"burstiness without rate", Workload{Burstiness: 2}, "Workload.Burstiness"},
		{"unknown arrival", Workload{Rate: 1, Arrival: "bursty"}, "Workload.Arrival"},
		{"burstiness with poisson", Workload{Rate: 1, Arrival: arrivalPoisson, Burstiness: 2}, "Workload.Burstiness"},
		{"burstiness below min", Workload{Rate: 1, Arrival: arrivalGamma, Burstiness: minBurstiness / 2}, "Workload.Burstiness"},
		{"burstiness above max", Workload{Rate: 1, Burstiness: maxBurstiness * 2}, "Workload.Burstiness"},
		{"negative burstiness", Workload{Rate: 1, Arrival: arrivalGamma, Burstiness: -1}, "Workload.Burstiness"},
		{"burst with rate", Workload{Rate: 1, Burst: 4}, "Workload.Burst"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.w.Resolved()
			require.ErrorIs(t, err, ErrInvalidConfig)
			var ce *FieldError
			require.True(t, errors.As(err, &ce), "%v", err)
			require.Equal(t, tc.field, ce.Field, "%v", err)
		})
	}
	for _, tc := range []struct {
		w            Workload
		wantArrival  ArrivalProcess
		wantBurstine float64
	}{
		{Workload{Rate: 5}, arrivalPoisson, 0},
		{Workload{Rate: 5, Burstiness: 0.5}, arrivalGamma, 0.5},
		{Workload{Rate: 5, Arrival: arrivalGamma}, arrivalGamma, defaultBurstiness},
		{Workload{Rate: 5, Arrival: arrivalConstant}, arrivalConstant, 0},
		{Workload{}, "", 0},
	} {
		got, err := tc.w.Resolved()
		require.NoError(t, err)
		require.Equal(t, tc.wantArrival, got.Arrival)
		require.Equal(t, tc.wantBurstine, got.Burstiness)
		again, err := got.Resolved()
		require.NoError(t, err)
		require.Equal(t, got.Arrival, again.Arrival)
	}
}

package capacity

import (
	"errors"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// sloReport is a closed-loop report of 5 requests over 2 s: four rows
// (TTFT 100, 200, 300, 400 ms; E2E 1, 2, 3, 4 s; TPOT 10, 20, nil, 40 ms)
// and one failure.
func sloReport() *artifact.Report {
	r := &artifact.Report{Requests: 5, WallClockMS: 2000, Failed: 1,
		Failures: []artifact.Failure{{RequestIndex: 4, FailureClass: artifact.FailureHTTPError}}}
	tpots := []*float64{ptr(10.0), ptr(20.0), nil, ptr(40.0)}
	for i := range 4 {
		r.RequestTimings = append(r.RequestTimings, artifact.TimingRow{
			RequestIndex: i, TTFTMS: float64(100 * (i + 1)), E2EMS: float64(1000 * (i + 1)), TPOTMS: tpots[i],
		})
	}
	return r
}

// TestSLOEvaluate: the per-request rule (every set bound, bounds
// inclusive, a missing TPOT never meets a TPOT bound, failures never
// count), attainment over the report's requests, goodput over wall time.
func TestSLOEvaluate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		slo    SLO
		met    int
		passed bool
	}{
		{"ttft only, bound inclusive", SLO{TTFT: 200 * time.Millisecond}, 2, false},
		{"ttft loose", SLO{TTFT: time.Second, Attainment: 0.8}, 4, true},
		{"attainment just missed", SLO{TTFT: time.Second, Attainment: 0.81}, 4, false},
		{"tpot: missing tpot fails", SLO{TPOT: time.Second, Attainment: 0.6}, 3, true},
		{"every bound must hold", SLO{TTFT: 300 * time.Millisecond, E2E: 2 * time.Second, Attainment: 0.4}, 2, true},
		{"e2e", SLO{E2E: 3500 * time.Millisecond, Attainment: 0.6}, 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := sloReport()
			got, err := tc.slo.Evaluate(r)
			require.NoError(t, err)
			s, _ := tc.slo.Resolved()
			want := artifact.SLOResult{
				TTFTMS: boundMS(tc.slo.TTFT), TPOTMS: boundMS(tc.slo.TPOT), E2EMS: boundMS(tc.slo.E2E),
				Attainment: s.Attainment, MetRequests: tc.met, Attained: float64(tc.met) / 5,
				Passed: tc.passed, GoodputRPS: float64(tc.met) / 2, LatencyClock: latencyClockSent,
			}
			if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(artifact.SLOResult{})); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
			require.Nil(t, r.AnvilGo, "Evaluate does not change the report")
			_, err = tc.slo.Apply(r)
			require.NoError(t, err)
			require.Equal(t, tc.met, r.AnvilGo.SLO.MetRequests)
			require.Equal(t, 1, r.AnvilGo.Version)
		})
	}
}

// TestSLOEvaluateScheduledClock: an open-loop report is judged on the
// scheduled clock. In the capped open loop of TestOpenLoopCapped every
// request takes 30 ms from its send, but request i waited 10*floor(i/2) ms
// for the cap: an E2E bound of 45 ms is met by the 4 requests that waited
// at most 10 ms, not by all 40, and goodput is 4 per 0.61 s of wall time.
func TestSLOEvaluateScheduledClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &arrivalLog{service: 30 * time.Millisecond}
		rep, err := Run(t.Context(), pipeTarget(t, h), Workload{
			Requests: 40, Concurrency: 2, ContextTokens: 512, Rate: 100, Arrival: arrivalConstant,
		})
		require.NoError(t, err)
		res, err := SLO{E2E: 45 * time.Millisecond}.Apply(rep)
		require.NoError(t, err)
		require.Equal(t, latencyClockScheduled, res.LatencyClock)
		require.Equal(t, 4, res.MetRequests)
		require.Equal(t, 0.1, res.Attained)
		require.False(t, res.Passed)
		require.Equal(t, 4/0.61, res.GoodputRPS)
		require.Equal(t, res, *rep.AnvilGo.SLO)

		closed, err := Run(t.Context(), pipeTarget(t, h), Workload{Requests: 40, Concurrency: 2, ContextTokens: 512})
		require.NoError(t, err)
		res, err = SLO{E2E: 45 * time.Millisecond}.Evaluate(closed)
		require.NoError(t, err)
		require.Equal(t, latencyClockSent, res.LatencyClock)
		require.Equal(t, 40, res.MetRequests, "a closed loop has no queue: every request meets 45 ms")
	})
}

// TestSLOInvalid: bad SLOs are FieldErrors naming the field; reports that
// cannot be judged wrap errNotEvaluable.
func TestSLOInvalid(t *testing.T) {
	for _, tc := range []struct {
		slo   SLO
		field string
	}{
		{SLO{}, "SLO.TTFT"},
		{SLO{TTFT: -time.Millisecond}, "SLO.TTFT"},
		{SLO{TTFT: time.Second, TPOT: -1}, "SLO.TPOT"},
		{SLO{E2E: -1}, "SLO.E2E"},
		{SLO{TTFT: time.Second, Attainment: 1.01}, "SLO.Attainment"},
		{SLO{TTFT: time.Second, Attainment: -0.5}, "SLO.Attainment"},
		{SLO{TTFT: time.Second, Attainment: math.NaN()}, "SLO.Attainment"},
	} {
		_, err := tc.slo.Evaluate(sloReport())
		require.ErrorIs(t, err, ErrInvalidConfig)
		var ce *FieldError
		require.True(t, errors.As(err, &ce))
		require.Equal(t, tc.field, ce.Field, "%v", err)
	}
	ok := SLO{TTFT: time.Second}
	for name, r := range map[string]*artifact.Report{
		"nil":         nil,
		"no requests": {WallClockMS: 1},
		"no wall":     {Requests: 1},
		"open loop without requests": {Requests: 1, WallClockMS: 1, RequestTimings: []artifact.TimingRow{{}},
			AnvilGo: &artifact.Extension{Arrival: &artifact.Arrival{Process: "poisson"}}},
	} {
		_, err := ok.Evaluate(r)
		require.ErrorIs(t, err, errNotEvaluable, name)
	}
	require.Equal(t, "ttft<=200ms,e2e<=2s,attain=0.9", SLO{TTFT: 200 * time.Millisecond, E2E: 2 * time.Second}.String())
}

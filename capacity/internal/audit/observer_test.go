package audit

import (
	"strings"
	"testing"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/stretchr/testify/require"
)

// detail is a sent request of anvil_go.requests.
func detail(i int, scheduled, sent, end float64, phases *artifact.Phases) artifact.RequestDetail {
	return artifact.RequestDetail{RequestIndex: i, ScheduledMS: new(scheduled), SentMS: new(sent), EndMS: new(end), Phases: phases}
}

// TestInputsOf: an open loop with a cap of 2: a request due while 2 others
// were in flight waited for the cap (its lag is not the client's); the
// others' lags are; pooled connections' waits are read, dialed ones not.
func TestInputsOf(t *testing.T) {
	reused := func(ms float64) *artifact.Phases { return &artifact.Phases{GotConnMS: ms, Reused: true} }
	rep := &artifact.Report{AnvilGo: &artifact.Extension{
		Arrival: &artifact.Arrival{MaxInFlight: 2},
		Requests: []artifact.RequestDetail{
			detail(0, 0, 0.5, 100, reused(0.01)),
			detail(1, 10, 10, 50, &artifact.Phases{ConnectMS: new(3.0), GotConnMS: 3}),
			detail(2, 20, 50, 120, reused(2)), // due with 0 and 1 in flight: waited for the cap
			detail(3, 100, 101.5, 130, reused(0.2)),
			{RequestIndex: 4, Outcome: artifact.OutcomeNeverSent, ScheduledMS: new(140.0)},
		},
	}}
	in := InputsOf(rep)
	require.Equal(t, []time.Duration{500 * time.Microsecond, 0, 1500 * time.Microsecond}, in.SendLags)
	require.Equal(t, []time.Duration{10 * time.Microsecond, 2 * time.Millisecond, 200 * time.Microsecond}, in.ConnWaits)

	require.Equal(t, Resolution{}, in.Resolution, "no timings: unknown")

	rep.AnvilGo.Arrival = nil
	require.Nil(t, InputsOf(rep).SendLags, "a closed loop has no send lag")
	require.Equal(t, Inputs{}, InputsOf(&artifact.Report{}))
}

// TestInputsOfResolution: the resolution is the TTFT p50 and the smaller
// of the inter-chunk gap p50 (when there are gaps) and the TPOT p50.
func TestInputsOfResolution(t *testing.T) {
	rep := &artifact.Report{AnvilGo: &artifact.Extension{}}
	rep.Metrics.TTFT.P50, rep.Metrics.TPOT.P50 = new(8000.0), new(40.0)
	require.Equal(t, Resolution{TTFT: 8 * time.Second, Gap: 40 * time.Millisecond, GapOf: "TPOT"}, InputsOf(rep).Resolution)

	rep.AnvilGo.ChunkTiming = &artifact.ChunkTiming{Gaps: 10, ITLMS: artifact.Quantiles{P50: 12.5}}
	require.Equal(t, Resolution{TTFT: 8 * time.Second, Gap: 12500 * time.Microsecond, GapOf: "inter-chunk gap"}, InputsOf(rep).Resolution)

	rep.AnvilGo.ChunkTiming.ITLMS.P50 = 60
	require.Equal(t, 40*time.Millisecond, InputsOf(rep).Resolution.Gap, "the smaller: TPOT")

	rep.AnvilGo.ChunkTiming = &artifact.ChunkTiming{}
	rep.Metrics.TPOT.P50 = nil
	require.Equal(t, Resolution{TTFT: 8 * time.Second}, InputsOf(rep).Resolution, "no gaps, no TPOT: unknown")
}

// TestObserverRelative: the end hook weighs a pool wait against the
// report's TTFT p50: 2.21 ms beside 8 s is ok.
func TestObserverRelative(t *testing.T) {
	end := (&Observer{}).Start(t.Context(), time.Now())
	rep := &artifact.Report{AnvilGo: &artifact.Extension{Requests: []artifact.RequestDetail{
		detail(0, 0, 0, 8000, &artifact.Phases{GotConnMS: 2.21, Reused: true}),
	}}}
	rep.Metrics.TTFT.P50 = new(8000.0)
	end(rep)
	a := rep.AnvilGo.Audit
	require.Equal(t, 1, a.PoolWaits)
	require.NotContains(t, strings.Join(a.Reasons, "\n"), "pooled connection")
}

// TestObserver: the end hook sets anvil_go.audit from the report.
func TestObserver(t *testing.T) {
	end := (&Observer{}).Start(t.Context(), time.Now())
	rep := &artifact.Report{AnvilGo: &artifact.Extension{Requests: []artifact.RequestDetail{
		detail(0, 0, 0, 10, &artifact.Phases{GotConnMS: 4, Reused: true}),
	}}}
	end(rep)
	a := rep.AnvilGo.Audit
	require.NotNil(t, a)
	require.Equal(t, 1, a.PoolWaits)
	require.Equal(t, 4.0, *a.PoolWaitMaxMS)
	require.Equal(t, "suspect", a.Verdict)
	require.Contains(t, a.Reasons, "1 requests waited for a pooled connection, up to 4 ms: their timings include the client's own queue")

	bare := &artifact.Report{}
	(&Observer{}).Start(t.Context(), time.Now())(bare)
	require.NotNil(t, bare.AnvilGo.Audit)
	require.Equal(t, 1, bare.AnvilGo.Version)
}

// TestObserverFinish: Finish takes the phase's end readings once; the end
// hook judges those, and again gives the same measurements.
func TestObserverFinish(t *testing.T) {
	o := &Observer{}
	o.Finish() // before Start: nothing to take
	end := o.Start(t.Context(), time.Now())
	o.Finish()
	taken := o.rec.end
	o.Finish()
	require.Same(t, taken, o.rec.end, "the readings are taken once")
	rep := &artifact.Report{}
	end(rep)
	first := *rep.AnvilGo.Audit
	require.Equal(t, first, *o.rec.Stop(Inputs{}), "the end hook judged the readings Finish took")
}

// TestReplaySendLagJudged: a trace replay has no anvil_go.arrival, and its
// send lag is judged all the same, capped at the run's concurrency: a
// replay at concurrency 4 that left 6 rows 112 to 115 ms late while at
// most 2 requests were in flight is suspect with the send-lag reason; a
// row due while 4 were in flight waited for the cap, not for the client.
func TestReplaySendLagJudged(t *testing.T) {
	reused := &artifact.Phases{GotConnMS: 0.01, Reused: true}
	var reqs []artifact.RequestDetail
	for i := range 40 {
		due := float64(100 * i)
		lag := 0.2
		if i >= 20 && i < 26 {
			lag = 112 + float64(i-20)*0.6 // 6 rows 112 to 115 ms late
		}
		reqs = append(reqs, detail(i, due, due+lag, due+lag+60, reused))
	}
	// 4 requests in flight at 4100 (sent 4000..4030, ending after 4100):
	// the next, due at 4100, waited for the cap.
	for k := range 4 {
		reqs = append(reqs, detail(40+k, 4000+float64(k)*10, 4000+float64(k)*10, 4200, reused))
	}
	reqs = append(reqs, detail(44, 4100, 4200, 4300, reused))
	rep := &artifact.Report{Concurrency: 4, AnvilGo: &artifact.Extension{
		Workload: &artifact.Workload{Kind: artifact.WorkloadTrace},
		Requests: reqs,
	}}
	rep.Metrics.TTFT.P50 = new(50.0)
	in := InputsOf(rep)
	require.Len(t, in.SendLags, 44, "every row but the one that waited for the cap")
	end := (&Observer{}).Start(t.Context(), time.Now())
	end(rep)
	a := rep.AnvilGo.Audit
	require.Equal(t, "suspect", a.Verdict)
	require.InDelta(t, 115, *a.SendLagMaxMS, 1e-9)
	require.Contains(t, a.Reasons, "open-loop send lag p99 115 ms: requests left later than scheduled while the in-flight cap allowed them (230% of the run's TTFT p50 of 50 ms)")

	rep.AnvilGo.Workload, rep.AnvilGo.Audit = nil, nil
	require.Nil(t, InputsOf(rep).SendLags, "a closed loop: due when a worker took it")
}

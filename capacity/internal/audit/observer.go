package audit

import (
	"context"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/inflight"
)

// Observer is the audit on the run-observer seam: its Start has the shape
// of capacity.Observer's, so a run can take it as one of its observers
// without this package importing capacity. Its inputs come from the
// report (InputsOf). One Observer audits one run.
type Observer struct {
	rec *Recorder
}

// Start starts a Recorder, whose probe ends with ctx at the latest, and
// returns the end hook, which stops it with InputsOf(rep) and sets
// rep.AnvilGo.Audit.
func (o *Observer) Start(ctx context.Context, _ time.Time) func(rep *artifact.Report) {
	rec := Start(ctx)
	o.rec = rec
	return func(rep *artifact.Report) {
		a := rec.Stop(InputsOf(rep))
		rep.Extension().Audit = a
	}
}

// Finish takes the readings when the measured phase ends, before the
// report is assembled (Recorder.Finish); without it the end hook takes
// them. Before Start it does nothing.
func (o *Observer) Finish() {
	if o.rec != nil {
		o.rec.Finish()
	}
}

// InputsOf reads the audit's inputs from a run's anvil_go.requests:
//
//   - send lags, for a run whose requests were due at times of their own
//     (an open loop, anvil_go.arrival, capped at its max_in_flight; a
//     trace replay or sessions, anvil_go.workload, capped at the run's
//     concurrency): sent_ms - scheduled_ms of each sent request that was
//     not waiting for the in-flight cap, that is, fewer than the cap of
//     other requests were in flight (sent at or before its due time, not
//     yet ended) when it was due;
//   - connection waits: phases.got_conn_ms of each sent request that did
//     not dial (no connect_ms): the time from t0 to a pooled connection;
//   - the resolution: metrics.ttft_p50_ms, and the smaller of
//     anvil_go.chunk_timing.itl_ms.p50 (when it has gaps) and
//     metrics.tpot_p50_ms.
func InputsOf(rep *artifact.Report) Inputs {
	var in Inputs
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	if v := rep.Metrics.TTFT.P50; v != nil {
		in.Resolution.TTFT = ms(*v)
	}
	if v := rep.Metrics.TPOT.P50; v != nil {
		in.Resolution.Gap, in.Resolution.GapOf = ms(*v), "TPOT"
	}
	x := rep.AnvilGo
	if x == nil {
		return in
	}
	if c := x.ChunkTiming; c != nil && c.Gaps > 0 && (in.Resolution.GapOf == "" || ms(c.ITLMS.P50) < in.Resolution.Gap) {
		in.Resolution.Gap, in.Resolution.GapOf = ms(c.ITLMS.P50), "inter-chunk gap"
	}
	for i := range x.Requests {
		d := &x.Requests[i]
		if d.SentMS == nil || d.Phases == nil || d.Phases.ConnectMS != nil {
			continue
		}
		in.ConnWaits = append(in.ConnWaits, ms(d.Phases.GotConnMS))
	}
	limit := rep.Concurrency
	switch {
	case x.Arrival != nil:
		limit = x.Arrival.MaxInFlight
	case x.Workload == nil:
		return in // a closed loop: a request is due when a worker takes it
	}
	tl := inflight.Of(x.Requests)
	for i := range x.Requests {
		d := &x.Requests[i]
		if d.SentMS == nil || d.ScheduledMS == nil {
			continue
		}
		due := *d.ScheduledMS
		busy := tl.Others(d, due)
		if busy < limit {
			in.SendLags = append(in.SendLags, ms(max(*d.SentMS-due, 0)))
		}
	}
	return in
}

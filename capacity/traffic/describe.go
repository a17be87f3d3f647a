package traffic

import (
	"context"
	"slices"
	"time"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/trace"
	"github.com/anvilbench/anvil/stats"
)

// What a replay and sessions add to the run's artifact
// (capacity/PROTOCOL.md#anvil-go): anvil_go.workload, the trace line of
// each replayed request, and a replay's schedule fidelity. They are
// written by the end hook of an Observer, once the engine has assembled
// the report.

// replayObserver is the Observer of a Replay.
type replayObserver struct{ r Replay }

// Start implements capacity.Observer.
func (o replayObserver) Start(context.Context, time.Time) func(*artifact.Report) {
	return o.describe
}

// describe writes the replay's workload, each request's trace line and
// the send lag of the requests sent into rep.
func (o replayObserver) describe(rep *artifact.Report) {
	x := rep.AnvilGo
	if x == nil {
		return
	}
	w := &artifact.Workload{Kind: artifact.WorkloadTrace, Trace: traceWorkload(o.r.Description)}
	var lags []float64
	for k := range x.Requests {
		d := &x.Requests[k]
		i := d.RequestIndex
		if i < 0 || i >= len(o.r.Records) {
			continue
		}
		line := o.r.Records[i].Line
		d.TraceLine = &line
		if d.SentMS != nil {
			lags = append(lags, *d.SentMS-msOf(o.r.Records[i].Offset))
		}
	}
	w.SendLagMS = sendLag(lags)
	x.Workload = w
}

// sendLag summarizes the send lags in milliseconds; nil for none.
func sendLag(lags []float64) *artifact.SendLag {
	if len(lags) == 0 {
		return nil
	}
	slices.Sort(lags)
	return &artifact.SendLag{Requests: len(lags), P50: stats.Percentile(lags, 50),
		P99: stats.Percentile(lags, 99), Max: lags[len(lags)-1]}
}

// traceWorkload is the artifact's form of a trace's Description; nil for
// none.
func traceWorkload(d *trace.Description) *artifact.TraceWorkload {
	if d == nil {
		return nil
	}
	t := &artifact.TraceWorkload{File: d.File, Format: string(d.Format), SHA256: d.SHA256, Bytes: int(d.Bytes),
		Rows: d.Rows, FirstLine: d.FirstLine, LastLine: d.LastLine, SpeedUp: d.SpeedUp,
		WindowStartMS: msOf(d.WindowStart), First: d.First}
	if d.WindowEnd > 0 {
		end := msOf(d.WindowEnd)
		t.WindowEndMS = &end
	}
	return t
}

// msOf is d in milliseconds.
func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// sessionsWorkload is anvil_go.workload of s.
func (s *Sessions) sessionsWorkload() *artifact.Workload {
	sw := &artifact.SessionsWorkload{Sessions: len(s.plans)}
	if s.spec != "" {
		spec := s.spec
		sw.Spec = &spec
	}
	if s.start.users > 0 {
		users := s.start.users
		sw.Users = &users
	}
	return &artifact.Workload{Kind: artifact.WorkloadSessions, Sessions: sw, Trace: traceWorkload(s.opts.Trace)}
}

var _ capacity.Observer = replayObserver{}

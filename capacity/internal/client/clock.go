package client

import (
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// A Clock holds the monotonic stamps of one measured request; a zero time
// means "not reached".
type Clock struct {
	Taken        time.Time // a worker took the request (closed loop: its scheduled time)
	Sent         time.Time // t0, immediately before the request was issued (Exchange.Start)
	End          time.Time // the response ended or failed
	FirstOutput  time.Time // first reasoning or content event
	FirstContent time.Time // first content event
}

// SetDetail records c in d (anvil_go.requests[]): each stamp as
// milliseconds after start, the campaign's start, the queue from taken to
// sent, and the TTFT and end-to-end time from when the request was taken.
func (c Clock) SetDetail(d *artifact.RequestDetail, start time.Time) {
	d.ScheduledMS, d.SentMS, d.EndMS = offsetMS(c.Taken, start), offsetMS(c.Sent, start), offsetMS(c.End, start)
	d.FirstOutputMS, d.FirstContentMS = offsetMS(c.FirstOutput, start), offsetMS(c.FirstContent, start)
	d.QueueMS = SinceMS(c.Taken, c.Sent)
	d.ScheduledTTFTMS, d.ScheduledE2EMS = SinceMS(c.Taken, c.FirstContent), SinceMS(c.Taken, c.End)
}

// offsetMS is t as milliseconds after start; nil for a zero t.
func offsetMS(t, start time.Time) *float64 {
	if t.IsZero() {
		return nil
	}
	ms := MS(t.Sub(start))
	return &ms
}

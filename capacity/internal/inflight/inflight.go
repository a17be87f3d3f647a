// Package inflight counts a run's requests in flight at an instant from
// the send and end offsets of its anvil_go.requests[]: in flight at t is
// sent at or before t and not ended by t (a request ending at t is no
// longer in flight; one that never ended is in flight from its send on).
// The audit judges send lag only when fewer than the cap were in flight;
// the merge of shards reconstructs how many were in flight across them.
package inflight

import (
	"slices"
	"sort"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// Timeline is the sorted send and end offsets of a run's requests.
type Timeline struct {
	sent, ended []float64
}

// Of is the timeline of requests: every one with a sent_ms, and the
// end_ms of those that have one.
func Of(requests []artifact.RequestDetail) Timeline {
	var t Timeline
	for i := range requests {
		d := &requests[i]
		if d.SentMS == nil {
			continue
		}
		t.sent = append(t.sent, *d.SentMS)
		if d.EndMS != nil {
			t.ended = append(t.ended, *d.EndMS)
		}
	}
	slices.Sort(t.sent)
	slices.Sort(t.ended)
	return t
}

// At is the number of requests in flight at offset at: sent at or before
// it, less those ended by it.
func (t Timeline) At(at float64) int {
	return atOrBefore(t.sent, at) - atOrBefore(t.ended, at)
}

// Others is the number of requests other than d in flight at offset at:
// At less d itself when d is among them (sent at or before at, not ended
// by it).
func (t Timeline) Others(d *artifact.RequestDetail, at float64) int {
	n := t.At(at)
	if d.SentMS != nil && *d.SentMS <= at && (d.EndMS == nil || *d.EndMS > at) {
		n--
	}
	return n
}

// atOrBefore is the number of xs (sorted) at or before t.
func atOrBefore(xs []float64, t float64) int {
	return sort.Search(len(xs), func(i int) bool { return xs[i] > t })
}

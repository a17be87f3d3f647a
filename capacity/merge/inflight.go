package merge

import (
	"slices"
	"sort"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// This file reconstructs the requests in flight across the shards of an
// open loop, each of which kept the whole in-flight cap.

// inFlightOf is anvil_go.shards.in_flight of merged requests[] (their
// offsets on the common clock) of an open loop whose shards each kept the
// in-flight cap: in flight at t is sent at or before t and not ended by t
// (a request with no end is in flight from its send on), and at each send
// the others in flight are counted; the peak is the most, itself
// included, and a send that found limit others in flight is over the cap.
func inFlightOf(requests []artifact.RequestDetail, limit int) *artifact.ShardInFlight {
	var sent, ended []float64
	for i := range requests {
		d := &requests[i]
		if d.SentMS == nil {
			continue
		}
		sent = append(sent, *d.SentMS)
		if d.EndMS != nil {
			ended = append(ended, *d.EndMS)
		}
	}
	slices.Sort(sent)
	slices.Sort(ended)
	atOrBefore := func(xs []float64, t float64) int { return sort.Search(len(xs), func(i int) bool { return xs[i] > t }) }
	f := &artifact.ShardInFlight{Cap: limit}
	for i := range requests {
		d := &requests[i]
		if d.SentMS == nil {
			continue
		}
		t := *d.SentMS
		others := atOrBefore(sent, t) - atOrBefore(ended, t) - 1 // itself is sent by t and not ended by t
		if d.EndMS != nil && *d.EndMS <= t {
			others++ // it ended at the instant it was sent: not among the ones in flight
		}
		f.Peak = max(f.Peak, others+1)
		if others >= limit {
			f.OverCapRequests++
		}
	}
	return f
}

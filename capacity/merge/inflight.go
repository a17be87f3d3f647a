package merge

import (
	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/inflight"
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
	tl := inflight.Of(requests)
	f := &artifact.ShardInFlight{Cap: limit}
	for i := range requests {
		d := &requests[i]
		if d.SentMS == nil {
			continue
		}
		others := tl.Others(d, *d.SentMS)
		f.Peak = max(f.Peak, others+1)
		if others >= limit {
			f.OverCapRequests++
		}
	}
	return f
}

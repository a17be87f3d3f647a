package anviltest

import (
	"fmt"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// connectionNote says when the server closed connections it had kept
// alive (capacity/PROTOCOL.md#connection-rule): the run then served it
// without reuse, so its latencies include a dial per request. Empty when
// it did not.
func connectionNote(r *artifact.Report) string {
	if r.AnvilGo == nil || r.AnvilGo.Connections == nil || r.AnvilGo.Connections.KeptAliveClosed == 0 {
		return ""
	}
	c := r.AnvilGo.Connections
	note := fmt.Sprintf("the server closed kept-alive connections right after answering on them (%d seen; llama.cpp's llama-server does after every streamed answer)", c.KeptAliveClosed)
	if c.ReuseDisabled {
		note += ": the rest of the run reused no connection, so each request's dial is inside its timings"
	}
	return note
}

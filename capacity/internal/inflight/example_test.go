package inflight_test

import (
	"fmt"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/inflight"
)

// Count the requests in flight when each of three requests was sent: the
// second ends as the third is sent, so the third finds only the first.
func ExampleTimeline_Others() {
	ms := func(v float64) *float64 { return &v }
	requests := []artifact.RequestDetail{
		{RequestIndex: 0, SentMS: ms(0), EndMS: ms(300)},
		{RequestIndex: 1, SentMS: ms(100), EndMS: ms(200)},
		{RequestIndex: 2, SentMS: ms(200), EndMS: ms(400)},
	}
	tl := inflight.Of(requests)
	for i := range requests {
		d := &requests[i]
		fmt.Printf("request %d: %d others in flight\n", d.RequestIndex, tl.Others(d, *d.SentMS))
	}
	// Output:
	// request 0: 0 others in flight
	// request 1: 1 others in flight
	// request 2: 1 others in flight
}

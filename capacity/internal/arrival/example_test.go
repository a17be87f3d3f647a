package arrival_test

import (
	"fmt"

	"github.com/anvilbench/anvil/capacity/internal/arrival"
)

// A bursty schedule of 8 requests at 4 requests per second: gamma
// intervals with burstiness 0.5 (CV √2), drawn from seed 7. The offsets are
// the same on every platform; the runner sends request i at start +
// offsets[i] and measures its latency from that time. Seven bursty
// intervals are far too few for the offered rate to be near 4; it
// converges as the schedule grows.
func ExampleSchedule() {
	spec := arrival.Spec{Process: arrival.Gamma, Rate: 4, Burstiness: 0.5, Seed: 7}
	offsets, err := arrival.Schedule(spec, 8)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, d := range offsets {
		fmt.Printf("request %d at %v\n", i, d)
	}
	fmt.Printf("offered: %.3f requests/s\n", arrival.Offered(offsets))

	_, err = arrival.Schedule(arrival.Spec{Process: arrival.Poisson, Rate: 0}, 8)
	fmt.Println(err)
	// Output:
	// request 0 at 0s
	// request 1 at 7.543255ms
	// request 2 at 240.077737ms
	// request 3 at 478.862308ms
	// request 4 at 640.33691ms
	// request 5 at 1.462274783s
	// request 6 at 3.20534277s
	// request 7 at 3.503157396s
	// offered: 1.998 requests/s
	// arrival: Spec.Rate = 0: must be in [0.001, 1e+06] requests per second
}

package steady_test

import (
	"fmt"

	"github.com/anvilbench/anvil/capacity/internal/steady"
)

// A closed loop of 4 slots whose requests take 500 ms, the first second
// 4 times slower (a cold engine): the window starts after it.
func ExampleFind() {
	in := steady.Input{Load: steady.InFlight, Concurrency: 4}
	for slot := range 4 {
		at := float64(slot) * 10
		for at < 60000 {
			ttft, e2e := 40.0+float64(int(at)%7), 500.0
			if at < 1000 {
				ttft, e2e = 4*ttft, 4*e2e
			}
			in.Requests = append(in.Requests, steady.Request{At: at, Sent: at, End: at + e2e, OK: true, TTFT: ttft})
			at += e2e
		}
		in.PhaseMS = max(in.PhaseMS, at)
	}
	w := steady.Find(in)
	fmt.Printf("found %v: %.0f to %.0f ms in bins of %.0f ms, %.2f of %.0f in flight\n",
		w.Found, *w.StartMS, *w.EndMS, w.BinMS, *w.Achieved, *w.Target)
	// Output: found true: 3000 to 58000 ms in bins of 1000 ms, 4.00 of 4 in flight
}

package capacity_test

import (
	"fmt"
	"time"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/artifact"
)

// An SLO is judged per request: here three of four requests see their
// first token within 250 ms, one failed, so 3 of 5 meet it: 60%, below the
// default attainment of 90%. Goodput is 3 requests over the 2 s run.
func ExampleSLO_Evaluate() {
	rep := &artifact.Report{Requests: 5, WallClockMS: 2000, Failed: 1}
	for i, ttft := range []float64{120, 180, 250, 900} {
		rep.RequestTimings = append(rep.RequestTimings, artifact.TimingRow{RequestIndex: i, TTFTMS: ttft, E2EMS: 2 * ttft})
	}
	res, err := capacity.SLO{TTFT: 250 * time.Millisecond}.Evaluate(rep)
	if err != nil {
		panic(err)
	}
	fmt.Printf("met %d, attained %.0f%%, passed %t, goodput %.1f req/s, clock %s\n",
		res.MetRequests, 100*res.Attained, res.Passed, res.GoodputRPS, res.LatencyClock)
	// Output:
	// met 3, attained 60%, passed false, goodput 1.5 req/s, clock sent
}

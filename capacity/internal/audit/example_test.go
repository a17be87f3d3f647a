package audit_test

import (
	"context"
	"fmt"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/audit"
)

// Judge turns the measurements into the verdict, weighed against the
// run's own timings: stalls that held a tenth of the client's wake-ups
// 4.1 ms are suspect beside 5 ms gaps, not beside gaps of 100 ms.
func ExampleJudge() {
	p90, worst := 4.1, 14.7
	a := &artifact.Audit{HeldWakeLagP90MS: &p90, HeldWakeLagMaxMS: &worst, WakeSamples: 200, GOMAXPROCS: 2}
	audit.Judge(a, audit.Resolution{Gap: 5 * time.Millisecond, GapOf: "TPOT"})
	fmt.Println(a.Verdict)
	fmt.Println(a.Reasons[0])
	audit.Judge(a, audit.Resolution{Gap: 100 * time.Millisecond, GapOf: "TPOT"})
	fmt.Println(a.Verdict)
	// Output:
	// suspect
	// intermittent stalls: the client's own work held its processors while its wake-ups were due, one in ten by 4.1 ms or more, up to 14.7 ms: timings are uncertain by up to ~15 ms (82% of the run's TPOT p50 of 5 ms)
	// ok
}

// A Recorder brackets the measured phase.
func ExampleStart() {
	rec := audit.Start(context.Background())
	// ... the measured phase ...
	a := rec.Stop(audit.Inputs{})
	fmt.Println(a.GOMAXPROCS > 0, a.SendLagP99MS == nil)
	// Output: true true
}

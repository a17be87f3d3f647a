package audit_test

import (
	"context"
	"fmt"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/audit"
)

// Judge turns the measurements into the verdict, weighed against the
// run's own timings: a 4.1 ms scheduler latency is suspect beside 5 ms
// gaps, not beside gaps of 100 ms.
func ExampleJudge() {
	p99 := 4.1
	a := &artifact.Audit{SchedLatencyP99MS: &p99, SchedSamples: 900, GOMAXPROCS: 2}
	audit.Judge(a, audit.Resolution{Gap: 5 * time.Millisecond, GapOf: "TPOT"})
	fmt.Println(a.Verdict)
	fmt.Println(a.Reasons[0])
	audit.Judge(a, audit.Resolution{Gap: 100 * time.Millisecond, GapOf: "TPOT"})
	fmt.Println(a.Verdict)
	// Output:
	// suspect
	// scheduler latency p99 4.1 ms: timings below ~4.1 ms resolution are not trustworthy (82% of the run's TPOT p50 of 5 ms)
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

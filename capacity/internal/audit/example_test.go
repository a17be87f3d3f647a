package audit_test

import (
	"context"
	"fmt"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/audit"
)

// Judge turns the measurements into the verdict.
func ExampleJudge() {
	p99 := 4.1
	a := &artifact.Audit{SchedLatencyP99MS: &p99, SchedSamples: 900, GOMAXPROCS: 2}
	audit.Judge(a)
	fmt.Println(a.Verdict)
	fmt.Println(a.Reasons[0])
	// Output:
	// suspect
	// scheduler latency p99 4.1 ms: timings below ~4.1 ms resolution are not trustworthy
}

// A Recorder brackets the measured phase.
func ExampleStart() {
	rec := audit.Start(context.Background())
	// ... the measured phase ...
	a := rec.Stop(audit.Inputs{})
	fmt.Println(a.GOMAXPROCS > 0, a.SendLagP99MS == nil)
	// Output: true true
}

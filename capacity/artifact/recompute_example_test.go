package artifact_test

import (
	"fmt"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// A runner fills the run fields of a Report, then Recompute derives the
// metrics and MarshalJSON writes the artifact.
func ExampleReport_Recompute() {
	r := &artifact.Report{
		Schema:      artifact.Schema,
		Requests:    2,
		WallClockMS: 1000,
		RequestTimings: []artifact.TimingRow{
			{RequestIndex: 0, OutputTokens: new(33), OutputTokenSource: artifact.SourceUsage,
				TimeToFirstOutputMS: 80, TTFTMS: 80, E2EMS: 400, GenerationMS: 320, VisibleGenerationMS: 320,
				DecodeTokS: new(100.0), TPOTMS: new(10.0)},
			{RequestIndex: 1, OutputTokens: new(17), OutputTokenSource: artifact.SourceUsage,
				TimeToFirstOutputMS: 120, TTFTMS: 120, E2EMS: 440, GenerationMS: 320, VisibleGenerationMS: 320,
				DecodeTokS: new(50.0), TPOTMS: new(20.0)},
		},
	}
	if err := r.Recompute(); err != nil {
		fmt.Println(err)
		return
	}
	m := r.Metrics
	fmt.Println("eligible:", r.PerformanceEligible, "protocol:", r.MeasurementProtocol)
	fmt.Println("ttft p50 ms:", *m.TTFT.P50, "mean:", *m.TTFT.Mean, "stddev:", *m.TTFT.Stddev)
	fmt.Println("throughput tok/s:", *m.ThroughputTokS)
	// Output:
	// eligible: true protocol: capacity-v3
	// ttft p50 ms: 80 mean: 100 stddev: 28.284271247461902
	// throughput tok/s: 50
}

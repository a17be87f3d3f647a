package reporters

import "github.com/anvilbench/anvil/capacity/artifact"

// throughputReported is the run's aggregate output throughput when it may
// be reported: only for an eligible run (see artifact.Report.Eligible), never for a run
// with a failed, cancelled or never-sent request, whatever the artifact
// recorded.
func throughputReported(r *artifact.Report) *float64 {
	if ok, _ := r.Eligible(); !ok {
		return nil
	}
	return r.Metrics.ThroughputTokS
}

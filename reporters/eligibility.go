package reporters

import "github.com/anvilbench/anvil/capacity/artifact"

// Eligible reports whether r is a performance-eligible run, the value of
// the benchfmt "eligible" key, and whether the artifact recorded it
// (performance_eligible) or it was derived.
//
// Artifacts older than performance_eligible do not say. For them the
// value is derived the way the key is defined: eligible when every planned
// request completed (completed == requests > 0) and none failed
// (FailedRequests == 0). A recorded true is also checked against the same
// counts, so no artifact with a failure is ever reported eligible.
func Eligible(r *artifact.Report) (eligible, recorded bool) {
	complete := r.Requests > 0 && r.Completed == r.Requests && FailedRequests(r) == 0
	if r.Has("performance_eligible") {
		return r.PerformanceEligible && complete, true
	}
	return complete, false
}

// throughputReported is the run's aggregate output throughput when it may
// be reported: only for an eligible run (see Eligible), never for a run
// with a failed, cancelled or never-sent request, whatever the artifact
// recorded.
func throughputReported(r *artifact.Report) *float64 {
	if ok, _ := Eligible(r); !ok {
		return nil
	}
	return r.Metrics.ThroughputTokS
}

package artifact

// Facts of a report that the v1 document does not state as one member but
// every reader needs the same way: how many requests were sent, never sent
// and failed, the failures of the requests sent, and whether the run is
// performance eligible. They are derived from the v1 counts and, when
// present, anvil_go.run and anvil_go.requests, so legacy artifacts answer
// too (capacity/PROTOCOL.md#cancelled).

// FailedRequests is the number of requests of r that are not latency
// samples: Failed, or for legacy artifacts that record no failures,
// requests minus completed.
func (r *Report) FailedRequests() int {
	if r.Failed > 0 || len(r.Failures) > 0 {
		return max(r.Failed, len(r.Failures))
	}
	return max(r.Requests-r.Completed, 0)
}

// SentRequests is the number of measured requests r actually sent to the
// server: anvil_go.run.sent_requests when the artifact records it, else
// requests (artifacts without the extension do not tell a planned request
// from a sent one). It is the benchmark's iteration count.
func (r *Report) SentRequests() int {
	if r.AnvilGo != nil && r.AnvilGo.Run != nil {
		return min(max(r.AnvilGo.Run.SentRequests, 0), max(r.Requests, 0))
	}
	return max(r.Requests, 0)
}

// UnsentRequests is the number of planned requests r never sent:
// requests - SentRequests (0 without anvil_go.run).
func (r *Report) UnsentRequests() int {
	return max(r.Requests, 0) - r.SentRequests()
}

// SentFailedRequests is the number of requests that were sent and failed
// (the failed-req unit). With anvil_go.requests it counts the failure rows
// of requests not recorded as never sent (SentFailures): an interrupted
// run writes its never-sent requests as cancelled failure rows, an early
// stop writes none for them, and both come out right. Without it,
// FailedRequests less the requests never sent.
func (r *Report) SentFailedRequests() int {
	if r.AnvilGo != nil && len(r.AnvilGo.Requests) > 0 {
		return len(r.SentFailures())
	}
	return max(r.FailedRequests()-r.UnsentRequests(), 0)
}

// SentFailures returns the failure rows of the requests r sent. The v1
// document also records every planned request the run never sent as a
// "cancelled" failure (capacity/PROTOCOL.md#cancelled); those are no
// failure of the server and are left out, told apart by
// anvil_go.requests (outcome never_sent). Without it every row is kept
// (such an artifact does not tell a planned request from a sent one).
func (r *Report) SentFailures() []*Failure {
	never := map[int]bool{}
	if r.AnvilGo != nil {
		for _, d := range r.AnvilGo.Requests {
			if d.Outcome == OutcomeNeverSent {
				never[d.RequestIndex] = true
			}
		}
	}
	out := make([]*Failure, 0, len(r.Failures))
	for i := range r.Failures {
		if !never[r.Failures[i].RequestIndex] {
			out = append(out, &r.Failures[i])
		}
	}
	return out
}

// SentFailureClasses counts the failures of the requests r sent by failure
// class (the error type for a row without one, "-" for neither), never-sent
// requests left out (see SentFailedRequests), so that the counts sum to the
// failed requests a benchmark line and its log report. The classes are the
// artifact's text, not escaped for a terminal.
func (r *Report) SentFailureClasses() map[string]int {
	counts := map[string]int{}
	for _, f := range r.SentFailures() {
		c := string(f.FailureClass)
		if c == "" {
			c = f.ErrorType
		}
		if c == "" {
			c = "-"
		}
		counts[c]++
	}
	return counts
}

// Eligible reports whether r is a performance-eligible run (the benchfmt
// "eligible" key), and whether the artifact recorded it
// (performance_eligible) or it was derived.
//
// Artifacts older than performance_eligible do not say. For them the
// value is derived the way the key is defined: eligible when every planned
// request completed (completed == requests > 0) and none failed
// (FailedRequests == 0). A recorded true is also checked against the same
// counts, so no artifact with a failure is ever reported eligible.
func (r *Report) Eligible() (eligible, recorded bool) {
	complete := r.Requests > 0 && r.Completed == r.Requests && r.FailedRequests() == 0
	if r.Has("performance_eligible") {
		return r.PerformanceEligible && complete, true
	}
	return complete, false
}

package reporters

import "github.com/anvilbench/anvil/capacity/artifact"

// UnitUnsent is the number of planned requests the run never sent (an
// interrupted or early-stopped run): anvil_go.run, requests minus
// sent_requests. It is reported only when positive. The v1 document counts
// these requests as "cancelled" failures; on the benchmark line they are
// neither iterations nor failed-req.
const UnitUnsent = "unsent-req"

// SentRequests is the number of measured requests r actually sent to the
// server: anvil_go.run.sent_requests when the artifact records it, else
// requests (artifacts without the extension do not tell a planned request
// from a sent one). It is the benchmark's iteration count.
func SentRequests(r *artifact.Report) int {
	if run := runSummary(r); run != nil {
		return min(max(run.SentRequests, 0), max(r.Requests, 0))
	}
	return max(r.Requests, 0)
}

// UnsentRequests is the number of planned requests r never sent:
// requests - SentRequests (0 without anvil_go.run).
func UnsentRequests(r *artifact.Report) int {
	return max(r.Requests, 0) - SentRequests(r)
}

// SentFailedRequests is the number of requests that were sent and failed
// (the failed-req unit). With anvil_go.requests it counts the failure rows
// of requests not recorded as never sent (SentFailures): an interrupted
// run writes its never-sent requests as cancelled failure rows, an early
// stop writes none for them, and both come out right. Without it,
// FailedRequests less the requests never sent.
func SentFailedRequests(r *artifact.Report) int {
	if r.AnvilGo != nil && len(r.AnvilGo.Requests) > 0 {
		return len(SentFailures(r))
	}
	return max(FailedRequests(r)-UnsentRequests(r), 0)
}

func runSummary(r *artifact.Report) *artifact.RunSummary {
	if r.AnvilGo == nil {
		return nil
	}
	return r.AnvilGo.Run
}

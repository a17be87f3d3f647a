package reporters

import "github.com/anvilbench/anvil/capacity/artifact"

// unitUnsent is the number of planned requests the run never sent (an
// interrupted or early-stopped run): anvil_go.run, requests minus
// sent_requests. It is reported only when positive. The v1 document counts
// these requests as "cancelled" failures; on the benchmark line they are
// neither iterations nor failed-req.
const unitUnsent = "unsent-req"

func runSummary(r *artifact.Report) *artifact.RunSummary {
	if r.AnvilGo == nil {
		return nil
	}
	return r.AnvilGo.Run
}

package reporters

import (
	"fmt"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// probeLine is the account of anvil_go.probe_requests: how many probes
// were sent at which rate, their outcomes and their latency; "" without
// probes.
func probeLine(r *artifact.Report) string {
	if r.AnvilGo == nil || r.AnvilGo.ProbeRequests == nil {
		return ""
	}
	p := r.AnvilGo.ProbeRequests
	line := fmt.Sprintf("probe requests: %d sent at %s/s beside the load (max_tokens %d), %d succeeded, %d failed, %d cancelled at the end",
		p.Sent, formatFloat(p.RateRPS), p.MaxTokens, p.Succeeded, p.Failed, p.Cancelled)
	if q := p.TTFOMS; q != nil {
		line += fmt.Sprintf("; TTFO p50 %s  p90 %s  p99 %s  max %s ms", num(&q.P50), num(&q.P90), num(&q.P99), num(&q.Max))
	}
	if q := p.E2EMS; q != nil {
		line += fmt.Sprintf("; E2E p50 %s ms", num(&q.P50))
	}
	if p.FirstError != nil {
		line += "; first failure: " + Printable(*p.FirstError)
	}
	return line
}

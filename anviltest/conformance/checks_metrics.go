package conformance

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/anvilbench/anvil/capacity/servermetrics"
)

// metricsProbeInterval is the interval the metrics check's Config names:
// its GET then has a quarter of it to answer, as a sample would.
const metricsProbeInterval = 10 * time.Second

// checkMetrics GETs the metrics endpoint once (servermetrics.Probe).
func (p *prober) checkMetrics(ctx context.Context) Verdict {
	u, err := servermetrics.EndpointURL(p.base, p.target.MetricsURL)
	if err != nil {
		return verdict(Fail, p.scrub(err.Error()))
	}
	if u == "" {
		return verdict(Skip, "the metrics sampler is off (Target.MetricsURL = off)")
	}
	header := p.headers.Clone()
	if header == nil {
		header = http.Header{}
	}
	if p.apiKey != "" {
		header.Set("Authorization", "Bearer "+p.apiKey)
	}
	r, err := servermetrics.Probe(ctx, servermetrics.Config{URL: u, Interval: metricsProbeInterval, Client: p.hc, Header: header, Scrub: p.scrub})
	if err != nil {
		return verdict(Fail, p.scrub(err.Error()))
	}
	switch {
	case !r.Answered:
		return verdict(Skip, fmt.Sprintf("no metrics endpoint at %s: %s", r.Endpoint, r.Detail))
	case !r.Text:
		return verdict(Fail, fmt.Sprintf("%s answered, but not in the Prometheus text format: %s", r.Endpoint, r.Detail))
	}
	var notes []string
	if len(r.Curated) > 0 {
		notes = append(notes, "curated series present: "+strings.Join(r.Curated, ", "))
	}
	if len(r.Missing) > 0 {
		notes = append(notes, "curated series missing: "+strings.Join(r.Missing, ", "))
	}
	if len(r.Optional) > 0 {
		notes = append(notes, "speculative decoding series present: "+strings.Join(r.Optional, ", "))
	}
	if r.Engine == "" {
		return verdict(Pass, fmt.Sprintf("%s parses (%d families), with no engine's names anvil curates: only series named by the user are sampled", r.Endpoint, r.Families), notes...)
	}
	return verdict(Pass, fmt.Sprintf("%s parses (%d families) with %s's names, %d of its %d curated series", r.Endpoint, r.Families, r.Engine,
		len(r.Curated), len(r.Curated)+len(r.Missing)), notes...)
}

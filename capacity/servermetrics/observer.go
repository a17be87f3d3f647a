package servermetrics

import (
	"context"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// Observer is a Sampler on the run-observer seam: its Start has the shape
// of capacity.Observer's, so a run can take it as one of its observers
// (Workload.Observers) without this package importing capacity.
type Observer struct {
	// Sampler is the discovered sampler; nil observes nothing.
	Sampler *Sampler
}

// Prime takes the sampler's first sample before the phase's clock starts
// (Sampler.Prime); nil observes nothing.
func (o Observer) Prime(ctx context.Context) {
	if o.Sampler != nil {
		o.Sampler.Prime(ctx)
	}
}

// Start starts the sampler at the measured phase's start at and returns
// the end hook: it stops the sampler, computes the cross-checks from the
// report (FactsOf) and sets rep.AnvilGo.ServerMetrics.
func (o Observer) Start(ctx context.Context, at time.Time) func(rep *artifact.Report) {
	if o.Sampler == nil {
		return nil
	}
	o.Sampler.Start(ctx, at)
	return func(rep *artifact.Report) {
		m := o.Sampler.Stop()
		m.Checks = Check(m, FactsOf(rep))
		rep.Extension().ServerMetrics = m
	}
}

package capacity

import (
	"math"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/arrival"
)

// timedCampaign reports whether the run is a closed-loop Duration campaign,
// (or a Duration-bounded Workload.Schedule), which accounts for what it
// dispatched. An open loop's Duration fixed its schedule, and so its
// request count, before the run.
func (f *runFacts) timedCampaign() bool {
	return f.workload.Duration > 0 && !f.workload.OpenLoop()
}

// arrivalOf is anvil_go.arrival of an open-loop run (nil for a closed
// loop): the schedule's process, rate and seed, the in-flight cap, the
// rate the schedule offers over the requests the report accounts for, and
// the rate achieved over the actual send times of the measured requests.
// A rate is nil when it is undefined: fewer than two requests, or every
// request at one instant.
func arrivalOf(f runFacts, results []result, requests int) *artifact.Arrival {
	if f.schedule == nil {
		return nil
	}
	w := f.workload
	a := &artifact.Arrival{Process: string(w.Arrival), RateRPS: w.Rate, Seed: w.Seed, MaxInFlight: w.Concurrency}
	switch w.Arrival {
	case arrivalPoisson:
		one := 1.0
		a.Burstiness = &one
	case arrivalGamma:
		b := w.Burstiness
		a.Burstiness = &b
	}
	a.OfferedRPS = definedRate(arrival.Offered(f.schedule[:min(requests, len(f.schedule))]))
	sent := make([]time.Time, 0, len(results))
	for _, res := range results {
		if !res.clock.Sent.IsZero() {
			sent = append(sent, res.clock.Sent)
		}
	}
	a.AchievedRPS = definedRate(arrival.Achieved(sent))
	return a
}

// definedRate is a rate of package internal/arrival as an artifact value: nil for 0
// (fewer than two times) and +Inf (no span).
func definedRate(v float64) *float64 {
	if v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return &v
}

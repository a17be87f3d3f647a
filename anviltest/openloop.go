package anviltest

import (
	"fmt"
	"time"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/artifact"
)

// Environment variables of open-loop runs and SLOs. Like the others they
// fill only what the Workload and the options leave at zero.
const (
	// envRate makes the run an open loop at this many requests per second
	// (capacity.Workload.Rate) when the Workload sets no rate.
	envRate = "ANVIL_RATE"
	// envArrival is the arrival process of an open loop: constant, poisson
	// or gamma (capacity.Workload.Arrival).
	envArrival = "ANVIL_ARRIVAL"
	// envBurstiness is the gamma shape of the gamma arrival process
	// (capacity.Workload.Burstiness).
	envBurstiness = "ANVIL_BURSTINESS"
	// envSLOTTFT bounds each request's TTFT (a Go duration such as 500ms);
	// setting any ANVIL_SLO_* bound judges every run against the SLO.
	envSLOTTFT = "ANVIL_SLO_TTFT"
	// envSLOTPOT bounds each request's time per output token.
	envSLOTPOT = "ANVIL_SLO_TPOT"
	// envSLOE2E bounds each request's end-to-end latency.
	envSLOE2E = "ANVIL_SLO_E2E"
	// envSLOAttainment is the share of requests that must meet the bounds,
	// in (0, 1] (unset: 0.9).
	envSLOAttainment = "ANVIL_SLO_ATTAINMENT"
)

// WithSLO judges every run against slo (capacity.SLO, capacity/PROTOCOL.md#anvil-go):
// the artifact carries anvil_go.slo and the benchmark line the goodput-req/s
// metric. The ANVIL_SLO_* variables fill the fields slo leaves at zero.
func WithSLO(slo capacity.SLO) Option {
	return func(s *settings) { s.slo = slo }
}

// withProbe marks the run as probe p of a search (anvil_go.search).
func withProbe(p artifact.SearchProbe) Option {
	return func(s *settings) { s.probe = &p }
}

// applyOpenLoopEnv fills the open-loop fields the Workload leaves at zero.
func (s *settings) applyOpenLoopEnv(w capacity.Workload) (capacity.Workload, error) {
	e, err := s.env()
	if err != nil {
		return w, err
	}
	if w.Rate == 0 {
		w.Rate = e.rate
	}
	if w.Arrival == "" {
		w.Arrival = e.arrival
	}
	if w.Burstiness == 0 {
		w.Burstiness = e.burstiness
	}
	return w, nil
}

// resolveSLO fills the SLO fields the options leave at zero from the
// environment and checks the result; the SLO is off when no bound is set
// (an attainment alone sets nothing).
func (s *settings) resolveSLO() error {
	e, err := s.env()
	if err != nil {
		return err
	}
	for _, b := range []struct{ dst, env *time.Duration }{
		{&s.slo.TTFT, &e.slo.TTFT}, {&s.slo.TPOT, &e.slo.TPOT}, {&s.slo.E2E, &e.slo.E2E},
	} {
		if *b.dst == 0 {
			*b.dst = *b.env
		}
	}
	if s.slo.Attainment == 0 {
		s.slo.Attainment = e.slo.Attainment
	}
	if !s.slo.Set() {
		if s.slo.Attainment != 0 {
			return fmt.Errorf("anviltest: an SLO attainment (%g) without a bound: set WithSLO or %s, %s or %s", s.slo.Attainment, envSLOTTFT, envSLOTPOT, envSLOE2E)
		}
		return nil
	}
	slo, err := s.slo.Resolved()
	if err != nil {
		return fmt.Errorf("anviltest: %w", explainFields(err, sloFieldNames()...))
	}
	s.slo = slo
	return nil
}

// sloFieldNames pairs each SLO field with its environment variable.
func sloFieldNames() [][2]string {
	return [][2]string{
		{"SLO.TTFT", envSLOTTFT}, {"SLO.TPOT", envSLOTPOT}, {"SLO.E2E", envSLOE2E}, {"SLO.Attainment", envSLOAttainment},
	}
}

// judge records in r what the settings ask of it: the SLO's verdict
// (anvil_go.slo) and the search probe the run is (anvil_go.search). A
// report without requests is not judged.
func (s *settings) judge(r *artifact.Report) error {
	if !s.slo.Set() || r.Requests <= 0 {
		return nil
	}
	if _, err := s.slo.Apply(r); err != nil {
		return fmt.Errorf("anviltest: SLO %s: %w", s.slo, err)
	}
	if s.probe != nil {
		p := *s.probe
		r.AnvilGo.Search = &p
	}
	return nil
}

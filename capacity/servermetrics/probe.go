package servermetrics

import (
	"context"
	"errors"
	"slices"
)

// Outcomes of Probe, for the conformance suite's metrics check.
const (
	// ProbeAbsent: no metrics endpoint answered (no answer, or a status
	// other than 200): the check does not apply (SKIP).
	ProbeAbsent = "absent"
	// ProbeOK: the body is the Prometheus text format.
	ProbeOK = "ok"
	// ProbeNotText: the endpoint answered 200 with a body that is not the
	// text format (or too large): a metrics endpoint no scraper can read.
	ProbeNotText = "not_text"
)

// ProbeResult is what Probe learned of a metrics endpoint.
type ProbeResult struct {
	Endpoint string // the URL, as the artifact would record it
	Outcome  string // ProbeAbsent, ProbeOK or ProbeNotText
	// Detail is the failure, scrubbed; "" for ProbeOK.
	Detail string
	// Engine is the engine whose names the body has; "" when none.
	Engine Engine
	// Families counts the body's metric families (*_created excluded).
	Families int
	// Curated and Missing are the engine's curated families the body has
	// and lacks (nil without an engine).
	Curated, Missing []string
}

// Probe GETs the endpoint once (the conformance suite's metrics check):
// whether it answers, whether the body parses, and which engine's names
// it has. A bad Config is the only error.
func Probe(ctx context.Context, cfg Config) (ProbeResult, error) {
	if _, err := checkURL("URL", cfg.URL); err != nil {
		return ProbeResult{}, err
	}
	cfg, err := cfg.resolved()
	if err != nil {
		return ProbeResult{}, err
	}
	s := &Sampler{cfg: cfg, endpoint: Endpoint(cfg.URL, cfg.Scrub)}
	r := ProbeResult{Endpoint: s.endpoint}
	body, err := s.fetch(ctx)
	if err != nil {
		r.Outcome, r.Detail = ProbeAbsent, cfg.Scrub(err.Error())
		if errors.Is(err, errBodyTooLarge) {
			r.Outcome = ProbeNotText
		}
		return r, nil
	}
	sc, err := parseBytes(body, nil)
	if err != nil {
		r.Outcome, r.Detail = ProbeNotText, cfg.Scrub(err.Error())
		return r, nil
	}
	r.Outcome, r.Engine, r.Families = ProbeOK, sc.Engine, sc.Families
	if spec := specOf(sc.Engine); spec != nil {
		have := map[string]bool{}
		for _, smp := range sc.Samples {
			have[smp.Family] = true
		}
		for _, n := range spec.curated {
			if have[n] {
				r.Curated = append(r.Curated, n)
			} else {
				r.Missing = append(r.Missing, n)
			}
		}
		slices.Sort(r.Curated)
		slices.Sort(r.Missing)
	}
	return r, nil
}

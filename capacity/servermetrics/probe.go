package servermetrics

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
)

// ProbeResult is what Probe learned of a metrics endpoint. Answered and
// Text say which of three outcomes it was: no endpoint (not Answered: no
// answer, or a status other than 200; the conformance check does not
// apply), an endpoint no scraper can read (Answered, not Text: a body
// that is not the text format, or too large), or a readable one (Text).
type ProbeResult struct {
	Endpoint string // the URL, as the artifact would record it
	// Answered says the endpoint answered 200.
	Answered bool
	// Text says the body is the Prometheus text format (Answered too).
	Text bool
	// Detail is the failure, scrubbed; "" when Text.
	Detail string
	// Engine is the engine whose names the body has ("vllm", "sglang",
	// "llamacpp", "tgi"); "" when none.
	Engine string
	// Families counts the body's metric families (*_created excluded).
	Families int
	// Curated and Missing are the engine's curated families the body has
	// and lacks (nil without an engine).
	Curated, Missing []string
	// Optional are the engine's optional families the body has (its
	// speculative decoding's, served only with a draft model), never
	// missing.
	Optional []string
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
	s := newSampler(cfg)
	r := ProbeResult{Endpoint: s.endpoint}
	var body []byte
	if err := s.get(ctx, func(r io.Reader) (err error) {
		body, err = io.ReadAll(r)
		return err
	}); err != nil {
		r.Detail = cfg.Scrub(err.Error())
		r.Answered = errors.Is(err, errBodyTooLarge)
		return r, nil
	}
	r.Answered = true
	sc, err := s.scan.scan(bytes.NewReader(body), nil)
	if err == nil {
		err = checkFormat(body) // the format's own parser's verdict
	}
	if err != nil {
		r.Detail = cfg.Scrub(err.Error())
		return r, nil
	}
	r.Text, r.Engine, r.Families = true, string(sc.Engine), sc.Families
	if spec := specOf(sc.Engine); spec != nil {
		have := map[string]bool{}
		for _, f := range sc.Kept {
			have[f] = true
		}
		for _, n := range spec.curated {
			if have[n] {
				r.Curated = append(r.Curated, n)
			} else {
				r.Missing = append(r.Missing, n)
			}
		}
		for _, n := range spec.optional {
			if have[n] {
				r.Optional = append(r.Optional, n)
			}
		}
		slices.Sort(r.Curated)
		slices.Sort(r.Optional)
		slices.Sort(r.Missing)
	}
	return r, nil
}

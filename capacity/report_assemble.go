package capacity

import (
	"fmt"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/report"
)

// runFacts is everything a finished run hands to the report.
type runFacts struct {
	target     Target // resolved, Model filled in
	baseURL    string // redacted
	workload   Workload
	plan       *plan
	start, end time.Time // the measured phase, monotonic and wall
	cancelled  bool
	runner     *runner
	schedule   []time.Duration // open loop: the due offsets of the plan; nil for a closed loop
}

// assemble builds the report of a run and recomputes it.
func assemble(f runFacts) (*artifact.Report, error) {
	t, w, r := f.target, f.workload, f.runner
	rep := &artifact.Report{
		Schema:             artifact.Schema,
		RunID:              runID(f.start),
		StartedAt:          isoSecond(f.start),
		StartedAtUnixNS:    f.start.UnixNano(),
		FinishedAt:         isoSecond(f.end),
		FinishedAtUnixNS:   f.end.UnixNano(),
		TimestampPrecision: client.TimestampPrecision,
		WallClockMS:        client.MS(f.end.Sub(f.start)),
		ClockDomainID:      optional(t.ClockDomainID),

		BaseURL:                  f.baseURL,
		Model:                    r.cl.Scrub(t.Model), // may come from the server's /models
		Engine:                   optional(t.Engine),
		GPU:                      optional(t.GPU),
		Tier:                     optional(t.Tier),
		Manifest:                 optional(t.Manifest),
		SourceRecipe:             optional(t.SourceRecipe),
		ConfigurationFingerprint: optional(t.ConfigurationFingerprint),

		Concurrency:            w.Concurrency,
		MaxTokens:              w.MaxTokens,
		MaxContextTokens:       &f.plan.MaxModelLen,
		ContextSeed:            w.Seed,
		SharedPrefixTokens:     w.sharedPrefixTokens(),
		PromptCacheMode:        string(w.PromptCacheMode),
		RequestCanaries:        w.RequestCanaries,
		ResponseWords:          w.ResponseWords,
		ControlledOutputPolicy: string(w.ControlledOutputPolicy),
		ServeFlags: artifact.ServeFlags{
			ThinkingMode:      string(w.ThinkingMode),
			NoThinking:        w.ThinkingMode == thinkingDisabled,
			ReasoningEffort:   optional(string(w.ReasoningEffort)),
			SharedPrefixBurst: w.Burst > 0,
		},
		Sampling:          artifact.Sampling{Temperature: temperatureField(w.Temperature), TopP: samplingField(w.TopP)},
		TimingMethodology: client.TimingMethodology(),
	}
	if w.ContextTokens > 0 && w.Source == nil {
		// A Source's contexts are its own: context_tokens is null and
		// context_distribution counts the planned contexts it gave.
		rep.ContextTokens = &w.ContextTokens
	}
	measured := r.measured()
	results := make([]report.Result, len(measured))
	for i, res := range measured {
		results[i] = res.Result
	}
	run := report.Run{
		Report: rep, Start: f.start, Contexts: f.plan.Contexts, Indexes: r.indexes(), Dispatched: r.dispatched, Results: results,
		Cancelled: f.cancelled, Stopped: r.stopped, Expired: r.expired, EarlyStop: r.earlyStop,
		API: t.apiOf(), PromptSizing: promptSizingOf(f.plan, measured), ChunkTiming: client.ChunkTimingOf(r.chunks),
		Connections: connectionsOf(r), Arrival: arrivalOf(w, f.schedule), Schedule: f.schedule, SteadyLoad: r.steadyLoad(),
	}
	if w.Duration > 0 && !w.OpenLoop() {
		run.Campaign = w.Duration
	}
	if run.API == client.APIEmbeddings {
		run.AbsentTimings = absentTimingsEmbeddings
	}
	report.Assemble(run)
	if err := rep.Recompute(); err != nil {
		return rep, fmt.Errorf("%w: %w", errRecompute, err)
	}
	return rep, nil
}

// connectionsOf is anvil_go.connections of a run, but for the counts
// taken from its requests' phases (report.Assemble adds them).
func connectionsOf(r *runner) *artifact.Connections {
	c := &artifact.Connections{Prewarmed: r.prewarmed}
	if rule := r.cl.Rule(); rule != nil {
		c.KeptAliveClosed, c.ReuseDisabled = rule.KeptAliveClosed(), rule.ReuseDisabled()
	}
	return c
}

// optional records an empty identity string as null.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// samplingField records one sampling parameter: sent as requested when set.
func samplingField(v *float64) artifact.SamplingField {
	if v == nil {
		return artifact.SamplingField{}
	}
	req, eff := *v, *v
	return artifact.SamplingField{Requested: &req, Sent: true, EffectiveRequest: &eff}
}

// temperatureField records the temperature: always sent, defaultTemperature
// when none was requested.
func temperatureField(v *float64) artifact.SamplingField {
	if v != nil {
		return samplingField(v)
	}
	eff := defaultTemperature
	return artifact.SamplingField{Sent: true, EffectiveRequest: &eff}
}

// arrivalOf is anvil_go.arrival of an open-loop run but for its rates
// (report.Assemble computes them from schedule): the schedule's process,
// rate and seed, and the in-flight cap; nil for a closed loop (schedule
// nil).
func arrivalOf(w Workload, schedule []time.Duration) *artifact.Arrival {
	if schedule == nil {
		return nil
	}
	a := &artifact.Arrival{Process: string(w.Arrival), RateRPS: w.Rate, Seed: w.Seed, MaxInFlight: w.Concurrency}
	switch w.Arrival {
	case arrivalPoisson:
		one := 1.0
		a.Burstiness = &one
	case arrivalGamma:
		b := w.Burstiness
		a.Burstiness = &b
	}
	return a
}

package capacity

import (
	"fmt"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/stats"
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

// attempted returns the number of requests the report accounts for and the
// indexes that were planned but never sent because the run was cancelled.
//
// A fixed-count run accounts for its whole plan when cancelled (the unsent
// requests are "cancelled" failures, so the run is never performance
// eligible), and for the dispatched requests when it stopped early on
// Workload.MaxFailures or a refusal. A Duration campaign accounts for what it
// dispatched; cancelled before its end, it also records the request it would
// have sent next. A fixed-count run stopped early (capacity/PROTOCOL.md#early-stop)
// accounts for its whole plan, the requests never sent without a row
// (rows false): they are in anvil_go alone.
func (f *runFacts) attempted() (requests int, unsent []int, rows bool) {
	r := f.runner
	dispatched, ix := r.dispatched, r.indexes()
	if r.earlyStop != "" && !f.timedCampaign() {
		return len(ix), ix[dispatched:], false
	}
	requests, unsent = f.cancelledOrNot()
	return requests, unsent, true
}

// cancelledOrNot is attempted for a run not stopped early.
func (f *runFacts) cancelledOrNot() (requests int, unsent []int) {
	r := f.runner
	dispatched, ix := r.dispatched, r.indexes()
	switch {
	case !f.cancelled:
		if f.timedCampaign() || r.stopped || r.expired {
			return dispatched, nil
		}
		return len(ix), nil
	case f.timedCampaign() || r.stopped:
		if r.expired || r.stopped || dispatched >= len(ix) {
			return dispatched, nil
		}
		return dispatched + 1, []int{ix[dispatched]}
	}
	return len(ix), ix[dispatched:]
}

// assemble builds the report of a run and recomputes it.
func assemble(f runFacts) (*artifact.Report, error) {
	t, w := f.target, f.workload
	requests, unsent, unsentRows := f.attempted()
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
		Model:                    f.runner.cl.Scrub(t.Model), // may come from the server's /models
		Engine:                   optional(t.Engine),
		GPU:                      optional(t.GPU),
		Tier:                     optional(t.Tier),
		Manifest:                 optional(t.Manifest),
		SourceRecipe:             optional(t.SourceRecipe),
		ConfigurationFingerprint: optional(t.ConfigurationFingerprint),

		Requests:               requests,
		Concurrency:            w.Concurrency,
		MaxTokens:              w.MaxTokens,
		MaxContextTokens:       &f.plan.MaxModelLen,
		ContextSeed:            w.Seed,
		ContextDistribution:    make(map[int]int),
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
		RequestTimings:    []artifact.TimingRow{},
		Failures:          []artifact.Failure{},
	}
	if w.ContextTokens > 0 && w.Source == nil {
		// A Source's contexts are its own: context_tokens is null and
		// context_distribution counts the planned contexts it gave.
		rep.ContextTokens = &w.ContextTokens
	}
	for _, i := range f.runner.indexes()[:requests] {
		rep.ContextDistribution[f.plan.Contexts[i]]++
	}

	var ratios []float64
	measured := f.runner.measured()
	for _, res := range measured {
		switch {
		case res.fail != nil:
			rep.Failures = append(rep.Failures, *res.fail)
			if res.fail.ResponseReceived {
				rep.ResponsesReceived++
			}
		case res.row != nil:
			rep.RequestTimings = append(rep.RequestTimings, *res.row)
			rep.ResponsesReceived++
			if res.cacheRatio != nil {
				ratios = append(ratios, *res.cacheRatio)
			}
		}
	}
	for _, i := range unsent {
		if !unsentRows {
			break
		}
		rep.Failures = append(rep.Failures, artifact.Failure{
			RequestIndex:         i,
			PlannedContextTokens: f.plan.Contexts[i],
			FailureClass:         artifact.FailureCancelled,
			ErrorType:            client.ErrorTypeCancelled,
			ErrorMessage:         "run cancelled before the request was sent",
		})
	}
	rep.Completed, rep.Failed = len(rep.RequestTimings), len(rep.Failures)
	sourceBudget(rep, measured)
	extendReport(rep, f, measured, unsent)
	if len(ratios) > 0 {
		mean := stats.Summarize(ratios).Mean
		rep.Metrics.PrefixCacheHitAvg = &mean
	}
	if err := rep.Recompute(); err != nil {
		return rep, fmt.Errorf("%w: %w", errRecompute, err)
	}
	return rep, nil
}

// sourceBudget sets what a v1 reader learns of the requests a
// Workload.Source described (capacity/PROTOCOL.md#v1-of-a-source): their
// max_tokens is the largest any of them was sent (each request's is
// anvil_go.requests[].planned_output_tokens), and they shared no prefix
// unless the engine built one of their prompts in the plan's layout (a
// trace's shared blocks are no prefix of the Workload's). A run whose
// source sent nothing keeps the Workload's.
func sourceBudget(rep *artifact.Report, measured []result) {
	largest, prefixed, any := 0, false, false
	for _, res := range measured {
		if res.source == nil {
			continue
		}
		any = true
		largest = max(largest, res.source.maxTokens)
		prefixed = prefixed || res.source.prefixed
	}
	if !any {
		return
	}
	rep.MaxTokens = largest
	if !prefixed {
		rep.SharedPrefixTokens = 0
	}
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

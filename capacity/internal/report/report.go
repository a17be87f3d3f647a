package report

import (
	"math"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/arrival"
	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/itl"
	"github.com/anvilbench/anvil/capacity/internal/steady"
	"github.com/anvilbench/anvil/stats"
)

// A Result is what one measured request left for the report: a timing
// row or a failure, and its anvil_go.requests[] facts.
type Result struct {
	Index int                 // the request's plan index
	Row   *artifact.TimingRow // a success's timing row
	Fail  *artifact.Failure   // a failure's record (Row is nil)
	// CacheRatio is cached_tokens / prompt_tokens of a successful response
	// whose usage reported cached tokens.
	CacheRatio *float64
	// Clock holds the request's monotonic stamps.
	Clock client.Clock
	// PromptTokens is usage.prompt_tokens as the server counted it, when
	// the response reported it.
	PromptTokens *int
	// Chunks is the request's chunk timing (nil when not summarized).
	Chunks *itl.Summary
	// Phases is the request's connection record; nil when never sent.
	Phases *artifact.Phases
	// ServerTimings is what the server reported of its own timings.
	ServerTimings *artifact.ServerTimings
	// Source is what a Workload.Source said of the request and the usage
	// counts reported beside it; nil for the plan's own requests.
	Source *Source
	// Least is what the request's least prompt counts when exact sizing
	// could not size it for its plan, else 0.
	Least int
}

// Source holds the per-request keys of a request from a Workload.Source
// (anvil_go.requests[i]: session, turn, planned_output_tokens,
// counted_output_tokens, cached_prompt_tokens).
type Source struct {
	Session            string // "" for a request of no session
	Turn               int    // 0-based
	MaxTokens          int    // the max_tokens sent
	Completion, Cached *int   // the usage counts reported
	// Prefixed says the engine built the prompt in the plan's layout,
	// the shared prefix first (no Messages, no PrefixBlocks).
	Prefixed bool
}

// A Run is everything a finished run hands its report.
type Run struct {
	// Report is the report's head: schema, times, identity and settings.
	// Assemble writes the rest into it.
	Report *artifact.Report
	// Start is the measured phase's start, the origin of the offsets of
	// anvil_go.requests.
	Start time.Time
	// Contexts is the planned context of every plan index; Indexes the
	// indexes the run measures in dispatch order, of which Dispatched
	// were dispatched.
	Contexts   []int
	Indexes    []int
	Dispatched int
	// Results are the measured requests' results, sorted by index.
	Results []Result

	// Cancelled: the run's context ended it (or it did not start).
	// Stopped: dispatch stopped (Workload.MaxFailures, a refusal, the
	// early stop). Expired: a campaign's Duration elapsed, or a gate said
	// no. EarlyStop is why the early stop stopped the run, "" when it did
	// not.
	Cancelled, Stopped, Expired bool
	EarlyStop                   string
	// Campaign is the Duration of a closed-loop Duration campaign, which
	// accounts for what it dispatched; 0 for any other run.
	Campaign time.Duration

	// API is the API the run spoke (anvil_go.run.api), AbsentTimings why
	// its rows lack timings (anvil_go.run.absent_timings), "" when none.
	API, AbsentTimings string
	// PromptSizing, ChunkTiming and Connections become their anvil_go
	// objects; Assemble checks the plan against PromptSizing and adds the
	// counts of the requests' phases to Connections.
	PromptSizing *artifact.PromptSizing
	ChunkTiming  *artifact.ChunkTiming
	Connections  *artifact.Connections
	// Arrival is an open loop's anvil_go.arrival but for its rates, which
	// Assemble computes from Schedule (the plan's due offsets) and the
	// send times; nil for a closed loop.
	Arrival  *artifact.Arrival
	Schedule []time.Duration
	// SteadyLoad is what the steady window is held to (steady.InFlight,
	// steady.Rate, steady.None).
	SteadyLoad string
}

// Attempted returns the number of requests the report accounts for and
// the indexes that were planned but never sent, and whether those get a
// failure row (rows).
//
// A fixed-count run accounts for its whole plan when cancelled (the unsent
// requests are "cancelled" failures, so the run is never performance
// eligible), and for the dispatched requests when it stopped early on
// Workload.MaxFailures or a refusal. A Duration campaign accounts for what it
// dispatched; cancelled before its end, it also records the request it would
// have sent next. A fixed-count run stopped early (capacity/PROTOCOL.md#early-stop)
// accounts for its whole plan, the requests never sent without a row
// (rows false): they are in anvil_go alone.
func (r *Run) Attempted() (requests int, unsent []int, rows bool) {
	if r.EarlyStop != "" && r.Campaign == 0 {
		return len(r.Indexes), r.Indexes[r.Dispatched:], false
	}
	requests, unsent = r.cancelledOrNot()
	return requests, unsent, true
}

// cancelledOrNot is Attempted for a run not stopped early.
func (r *Run) cancelledOrNot() (requests int, unsent []int) {
	dispatched, ix, timed := r.Dispatched, r.Indexes, r.Campaign > 0
	switch {
	case !r.Cancelled:
		if timed || r.Stopped || r.Expired {
			return dispatched, nil
		}
		return len(ix), nil
	case timed || r.Stopped:
		if r.Expired || r.Stopped || dispatched >= len(ix) {
			return dispatched, nil
		}
		return dispatched + 1, []int{ix[dispatched]}
	}
	return len(ix), ix[dispatched:]
}

// Assemble writes into r.Report what the run measured (see the package
// doc).
func Assemble(r Run) {
	rep := r.Report
	requests, unsent, unsentRows := r.Attempted()
	rep.Requests = requests
	rep.RequestTimings, rep.Failures = []artifact.TimingRow{}, []artifact.Failure{}
	rep.ContextDistribution = make(map[int]int)
	for _, i := range r.Indexes[:requests] {
		rep.ContextDistribution[r.Contexts[i]]++
	}
	var ratios []float64
	for _, res := range r.Results {
		switch {
		case res.Fail != nil:
			rep.Failures = append(rep.Failures, *res.Fail)
			if res.Fail.ResponseReceived {
				rep.ResponsesReceived++
			}
		case res.Row != nil:
			rep.RequestTimings = append(rep.RequestTimings, *res.Row)
			rep.ResponsesReceived++
			if res.CacheRatio != nil {
				ratios = append(ratios, *res.CacheRatio)
			}
		}
	}
	for _, i := range unsent {
		if !unsentRows {
			break
		}
		rep.Failures = append(rep.Failures, artifact.Failure{
			RequestIndex:         i,
			PlannedContextTokens: r.Contexts[i],
			FailureClass:         artifact.FailureCancelled,
			ErrorType:            client.ErrorTypeCancelled,
			ErrorMessage:         "run cancelled before the request was sent",
		})
	}
	rep.Completed, rep.Failed = len(rep.RequestTimings), len(rep.Failures)
	sourceBudget(rep, r.Results)
	r.extend(unsent)
	if len(ratios) > 0 {
		mean := stats.Summarize(ratios).Mean
		rep.Metrics.PrefixCacheHitAvg = &mean
	}
}

// sourceBudget sets what a v1 reader learns of the requests a
// Workload.Source described (capacity/PROTOCOL.md#v1-of-a-source): their
// max_tokens is the largest any of them was sent (each request's is
// anvil_go.requests[].planned_output_tokens), and they shared no prefix
// unless the engine built one of their prompts in the plan's layout (a
// trace's shared blocks are no prefix of the Workload's). A run whose
// source sent nothing keeps the Workload's.
func sourceBudget(rep *artifact.Report, results []Result) {
	largest, prefixed, any := 0, false, false
	for _, res := range results {
		if res.Source == nil {
			continue
		}
		any = true
		largest = max(largest, res.Source.MaxTokens)
		prefixed = prefixed || res.Source.Prefixed
	}
	if !any {
		return
	}
	rep.MaxTokens = largest
	if !prefixed {
		rep.SharedPrefixTokens = 0
	}
}

// extend fills the anvil_go object of the report from the measured
// results and the indexes planned but never sent.
func (r *Run) extend(unsent []int) {
	rep := r.Report
	x := rep.Extension()
	api := r.API
	x.Run = &artifact.RunSummary{
		API:               &api,
		NeverSentRequests: len(unsent),
		Interrupted:       r.Cancelled || r.Stopped,
	}
	if r.AbsentTimings != "" {
		why := r.AbsentTimings
		x.Run.AbsentTimings = &why
	}
	x.Run.RecordBuild() // the binary that measured: module version, revision, Go
	x.PromptSizing, x.ChunkTiming, x.Connections = r.PromptSizing, r.ChunkTiming, r.Connections
	x.Requests = make([]artifact.RequestDetail, 0, len(r.Results)+len(unsent))
	if reason := r.EarlyStop; reason != "" {
		x.Run.StopReason = &reason
	}
	if r.Campaign > 0 {
		ms := client.MS(r.Campaign)
		x.Run.DurationMS = &ms
	}
	for _, res := range r.Results {
		d := r.detail(res)
		if p := res.Phases; p != nil {
			if p.Retried {
				x.Connections.Retried++
			}
			if !p.Reused {
				x.Connections.DialedInMeasurement++
			}
		}
		if !res.Clock.Sent.IsZero() {
			x.Run.SentRequests++
		}
		x.Requests = append(x.Requests, d)
	}
	x.PromptSizing.CheckPlan(x.Requests, rep.Failures)
	x.Arrival = r.arrival(len(r.Results) + len(unsent))
	for _, i := range unsent {
		x.Requests = append(x.Requests, artifact.RequestDetail{
			RequestIndex: i, Outcome: artifact.OutcomeNeverSent, PlannedPromptTokens: r.Contexts[i],
		})
	}
	x.Steady = steady.OfReport(rep, r.SteadyLoad)
}

// detail is anvil_go.requests[] of a measured request.
func (r *Run) detail(res Result) artifact.RequestDetail {
	d := artifact.RequestDetail{
		RequestIndex:        res.Index,
		Outcome:             artifact.OutcomeSuccess,
		PlannedPromptTokens: r.Contexts[res.Index],
		CountedPromptTokens: res.PromptTokens,
		ServerTimings:       res.ServerTimings,
		Phases:              res.Phases,
	}
	res.Clock.SetDetail(&d, r.Start)
	if res.Least > d.PlannedPromptTokens {
		least := res.Least
		d.LeastPromptTokens = &least
	}
	client.SetChunkDetail(&d, res.Chunks)
	if sf := res.Source; sf != nil {
		if sf.Session != "" {
			session, turn := sf.Session, sf.Turn+1
			d.Session, d.Turn = &session, &turn
		}
		maxTokens := sf.MaxTokens
		d.PlannedOutputTokens, d.CountedOutputTokens, d.CachedPromptTokens = &maxTokens, sf.Completion, sf.Cached
	}
	if res.Fail != nil {
		d.Outcome = string(res.Fail.FailureClass)
		d.ScheduledTTFTMS, d.ScheduledE2EMS = nil, nil
	}
	return d
}

// arrival is anvil_go.arrival of an open-loop run (nil for a closed
// loop): Run.Arrival with the rate the schedule offers over the requests
// the report accounts for, and the rate achieved over the actual send
// times of the measured requests. A rate is nil when it is undefined:
// fewer than two requests, or every request at one instant.
func (r *Run) arrival(requests int) *artifact.Arrival {
	if r.Arrival == nil {
		return nil
	}
	a := *r.Arrival
	a.OfferedRPS = definedRate(arrival.Offered(r.Schedule[:min(requests, len(r.Schedule))]))
	sent := make([]time.Time, 0, len(r.Results))
	for _, res := range r.Results {
		if !res.Clock.Sent.IsZero() {
			sent = append(sent, res.Clock.Sent)
		}
	}
	a.AchievedRPS = definedRate(arrival.Achieved(sent))
	return &a
}

// definedRate is a rate of package internal/arrival as an artifact value:
// nil for 0 (fewer than two times) and +Inf (no span).
func definedRate(v float64) *float64 {
	if v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return &v
}

package reporters

import "math"

// This file holds the view of a run that the HTML page and the comparer
// work on: plain values, no artifact types. html_view.go is the one file
// that builds it from an artifact; everything else reads only these structs,
// so a change of the artifact model touches that file alone.

// runView is one capacity run as the reporters show it.
type runView struct {
	Label     string // "run 1", set by the page
	Benchmark string // benchName: the benchmark as go test and benchstat name it
	RunID     string
	Model     string
	Engine    string
	GPU       string
	Protocol  string
	StartedAt string
	WallMS    float64 // NaN when not recorded
	Identity  []viewField
	Eligible  string // "yes", "no" or "not recorded"
	Audit     string // auditLine: the client's self-audit, "" without one
	Suspect   bool   // the audit's verdict is suspect
	// Steady is steadyLine: the steady-state window or why there is none,
	// "" without anvil_go.steady; SteadyFrom and SteadyTo are the window's
	// offsets, NaN when there is none.
	Steady               string
	SteadyFrom, SteadyTo float64
	// Probes is probeLine: the probe requests beside the load, "" without.
	Probes string
	// Energy and Spec are energyLine and specLine; "" without.
	Energy, Spec string
	Server       *serverView // the server's gauges (html_server.go); nil without
	Planned      int         // planned requests
	Succeeded    int
	Failed       int          // requests sent that failed
	Unsent       int          // planned requests never sent (v1 records them as cancelled failures)
	Failures     []classCount // failures of sent requests per class, by class name
	Summary      []metricSummary
	Throughput   float64 // output tok/s of the run; NaN when not eligible (Report.Eligible) or not recorded

	// Requests holds every request the artifact records (successes and
	// failures), sorted by request index.
	Requests []requestView
	// Offsets says whether requestView.Start and the other times are
	// offsets from the run start (from anvil_go.requests) or, when the
	// artifact has no send offsets, times since the request's own send
	// (every Start 0; the timeline then lays requests out by index).
	Offsets bool
	// Scheduled says whether every request also has the offset it was due
	// at (an open loop, requestView.Scheduled): the timeline then draws
	// each request from its scheduled time, its queue wait first.
	Scheduled bool
	// SchedTTFT is an open loop's TTFT from the scheduled time over its
	// successful requests, sorted; nil for a closed loop.
	SchedTTFT []float64

	Ext extView
}

// viewField is one labelled value of a run header.
type viewField struct{ Label, Value string }

// classCount is the number of failures of one class.
type classCount struct {
	Class string
	Count int
}

// metricSummary is one distribution's p50, p95 and p99 as the artifact
// records them (NaN when it does not).
type metricSummary struct {
	Name, Unit    string
	Samples       int // -1 when not recorded
	P50, P95, P99 float64
}

// requestView is one request: a latency sample, or a failure (Class set).
// Unknown values are NaN.
type requestView struct {
	Index        int
	PromptTokens float64 // usage prompt tokens, else the planned context
	TTFT         float64 // ms
	TTFO         float64 // ms
	TPOT         float64 // ms per decode token
	E2E          float64 // ms

	// Class is the failure class ("" for a success); Message the failure's
	// error type and message, unescaped server text.
	Class   string
	Message string

	// Timeline times in ms: see runView.Offsets. FirstOutput and
	// FirstContent are NaN when no output arrived.
	Start, FirstOutput, FirstContent, End float64
	// Queue is the time the request waited for the in-flight cap (open
	// loop), NaN when not recorded; Scheduled the offset it was due at
	// (Start - Queue as recorded), NaN when not recorded.
	Queue, Scheduled float64
	// PlannedPrompt is the request's planned prompt tokens, Cached the
	// server's cached prompt tokens and Counted its counted prompt tokens,
	// NaN when not recorded; Turn is its 1-based session turn, 0 for a
	// request of no session.
	PlannedPrompt, Cached, Counted float64
	Turn                           int
}

// failed reports whether the request is a failure.
func (q *requestView) failed() bool { return q.Class != "" }

// extView is what the anvil_go extension object adds to a run; every
// member is nil when the artifact does not carry it.
type extView struct {
	ITL     *itlView
	Arrival *arrivalView
	SLO     *sloView
	Search  *searchView
	Traffic *trafficView
}

// trafficView says a run replayed a trace or ran sessions
// (anvil_go.workload).
type trafficView struct {
	Kind   string // "trace" or "sessions"
	Source string // the trace file, or the sessions' spec
	// SHA256 is the trace's hash ("" for synthetic sessions); SpeedUp its
	// speed-up (NaN without a trace).
	SHA256  string
	SpeedUp float64
	// LagP50, LagP99 and LagMax are the replay's send lag in ms (NaN when
	// not recorded).
	LagP50, LagP99, LagMax float64
}

// itlView is the per-chunk inter-token latency over a run's successful
// requests.
type itlView struct {
	P50, P90, P99, P999, Max float64 // ms
	Gaps, Stalls             int
	Exact                    bool
	StallRule                string // how a stall is defined, as text
}

// arrivalView is the open-loop arrival process of a run.
type arrivalView struct {
	Process     string
	RateRPS     float64
	Burstiness  float64
	OfferedRPS  float64
	AchievedRPS float64
}

// sloView is an SLO evaluated on a run. A bound is NaN when not set.
type sloView struct {
	TTFTMS, TPOTMS, E2EMS float64
	Attainment, Attained  float64
	Passed                bool
	GoodputRPS            float64
}

// searchView says that a run is one probe of an SLO search.
type searchView struct {
	Kind  string // "concurrency" or "rate"
	Probe int
	Value float64
}

// known reports whether v is a recorded value.
func known(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// summaryOf returns the run's summary of the named metric, or nil.
func (v *runView) summaryOf(name string) *metricSummary {
	for i := range v.Summary {
		if v.Summary[i].Name == name {
			return &v.Summary[i]
		}
	}
	return nil
}

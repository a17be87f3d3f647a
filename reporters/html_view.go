package reporters

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/stats"
)

// This file is the one place where the HTML page and the comparer read the
// artifact model: it turns a *artifact.Report into the view structs of
// html_model.go and the identity document of compare_identity.go.

// WriteHTML writes one self-contained HTML page presenting runs: a header
// per run, latency CDFs with the runs overlaid, TTFT against prompt tokens,
// a per-request timeline, what the anvil_go extension adds (chunk ITL,
// queue times, SLO sweeps) and a table of p50/p95/p99 per metric. The page
// fetches nothing: its charts are inline SVG, its style inline CSS, and it
// has no script. Every artifact string is escaped.
func WriteHTML(w io.Writer, runs ...*artifact.Report) error {
	if len(runs) == 0 {
		return errors.New("reporters: html: no runs")
	}
	views := make([]runView, len(runs))
	for i, r := range runs {
		if r == nil {
			return fmt.Errorf("reporters: html: run %d: nil report", i+1)
		}
		v, err := viewOf(r)
		if err != nil {
			return fmt.Errorf("reporters: html: run %d: %w", i+1, err)
		}
		views[i] = v
	}
	return writePage(w, views)
}

// Compare compares the runs of old with those of new. It fails closed:
// when the runs of one side are not one workload, or the two sides sent
// different workloads, or an identity field is missing on one side or
// malformed, the error is a *NotComparableError naming every such key
// with both values. What differs in the setup under test (engine, GPU,
// model, run ids, times, fingerprint...) is reported as provenance in the
// Comparison. Metrics are compared per run: see Comparison.
func Compare(old, new []*artifact.Report) (Comparison, error) { return compare(old, new, false) }

// CompareAcrossAPIs is Compare for one workload sent over two APIs (the
// same server, planned prompts and settings; old over chat, new over
// Responses, say): the API may differ between the sides (never between
// the runs of one side), and the Comparison then says in ByDefinition what
// differs between the two by definition rather than by the server.
// Embeddings, which have no output tokens, compare with embeddings only.
func CompareAcrossAPIs(old, new []*artifact.Report) (Comparison, error) {
	return compare(old, new, true)
}

func compare(old, new []*artifact.Report, acrossAPI bool) (Comparison, error) {
	sides := [2][]compareRun{}
	for s, reps := range [2][]*artifact.Report{old, new} {
		if len(reps) == 0 {
			return Comparison{}, fmt.Errorf("reporters: compare: no %s runs", sideName[s])
		}
		for i, r := range reps {
			if r == nil {
				return Comparison{}, fmt.Errorf("reporters: compare: %s run %d: nil report", sideName[s], i+1)
			}
			c, err := compareRunOf(r)
			if err != nil {
				return Comparison{}, fmt.Errorf("reporters: compare: %s run %d: %w", sideName[s], i+1, err)
			}
			sides[s] = append(sides[s], c)
		}
	}
	return compareRuns(sides[0], sides[1], acrossAPI)
}

// document returns r as a generic JSON value: exactly the keys its artifact
// has, including members this version does not model (such as anvil_go).
// The request rows are left out; numbers stay json.Number.
func document(r *artifact.Report) (map[string]any, error) {
	data, err := r.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, err
	}
	doc := make(map[string]any, len(top))
	for k, raw := range top {
		switch k {
		case "request_timings", "failures", "metrics", "metric_population", "timing_methodology":
			continue
		}
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		doc[k] = v
	}
	return doc, nil
}

// compareRunOf extracts what Compare needs from r.
func compareRunOf(r *artifact.Report) (compareRun, error) {
	doc, err := document(r)
	if err != nil {
		return compareRun{}, err
	}
	m := &r.Metrics
	tpot := m.TPOT.P50
	if tpot == nil {
		tpot = m.MeanInterTokenLatencyMS.P50
	}
	failed := float64(r.FailedRequests())
	values := map[string]*float64{
		"ttft_p50": m.TTFT.P50, "ttft_p95": m.TTFT.P95, "ttft_p99": m.TTFT.P99,
		"ttfo_p50": m.TimeToFirstOutput.P50, "tpot_p50": tpot, "e2e_p50": m.E2E.P50,
		"decode_p50": m.DecodeTokS.P50, "prefill_p50": m.EffectivePrefillTokS.P50,
		"throughput": throughputReported(r), "failures": &failed,
	}
	if x := r.AnvilGo; x != nil && x.Steady != nil {
		values["steady_output"] = x.Steady.OutputTokS
	}
	return compareRun{doc: doc, values: values}, nil
}

// viewOf builds the page's view of r.
func viewOf(r *artifact.Report) (runView, error) {
	ext, reqs := extOf(r.AnvilGo)
	v := runView{
		Benchmark: benchName(r), RunID: r.RunID, Model: r.Model, Engine: deref(r.Engine), GPU: deref(r.GPU),
		Protocol: r.MeasurementProtocol, StartedAt: r.StartedAt, WallMS: math.NaN(),
		Planned: r.Requests, Succeeded: r.Completed, Failed: r.SentFailedRequests(), Unsent: r.UnsentRequests(),
		Throughput: ptrOrNaN(throughputReported(r)), Ext: ext,
		Eligible: "not recorded",
	}
	if r.WallClockMS > 0 {
		v.WallMS = r.WallClockMS
	}
	if r.Has("performance_eligible") {
		v.Eligible = map[bool]string{true: "yes", false: "no"}[r.PerformanceEligible]
	}
	v.Audit, v.Suspect = auditLine(r), suspect(r)
	v.Steady, v.SteadyFrom, v.SteadyTo = steadyLine(r), math.NaN(), math.NaN()
	v.Probes = probeLine(r)
	v.Energy, v.Spec = energyLine(r), specLine(r)
	if st := r.AnvilGo; st != nil && st.Steady != nil && st.Steady.Found {
		v.SteadyFrom, v.SteadyTo = *st.Steady.StartMS, *st.Steady.EndMS
	}
	if r.AnvilGo != nil {
		v.Server = serverViewOf(r.AnvilGo.ServerMetrics, r.AnvilGo.GPUMetrics)
	}
	v.Identity = identityFields(r, ext)
	v.Summary = append(summariesOf(&r.Metrics), scheduledSummaries(r)...)
	if sc := scheduledOf(r); sc != nil {
		v.SchedTTFT = sc.ttft
	}
	counts := map[string]int{}
	for _, f := range r.SentFailures() {
		counts[failureClassOf(*f)]++
	}
	if len(r.Failures) == 0 && v.Failed > 0 {
		counts["not recorded"] = v.Failed // legacy: a count without rows
	}
	for _, c := range slices.Sorted(maps.Keys(counts)) {
		v.Failures = append(v.Failures, classCount{c, counts[c]})
	}
	v.Requests, v.Offsets = requestsOf(r, reqs)
	v.Scheduled = v.Offsets && ext.Arrival != nil && !slices.ContainsFunc(v.Requests, func(q requestView) bool { return !known(q.Scheduled) })
	return v, nil
}

func failureClassOf(f artifact.Failure) string {
	if f.FailureClass != "" {
		return string(f.FailureClass)
	}
	return cmp.Or(f.ErrorType, "unclassified")
}

// requestsOf lists the requests of r sorted by index, with the timeline
// offsets of anvil_go.requests when every recorded request has them.
func requestsOf(r *artifact.Report, ext map[int]*artifact.RequestDetail) ([]requestView, bool) {
	out := make([]requestView, 0, len(r.RequestTimings)+len(r.Failures))
	for i := range r.RequestTimings {
		row := &r.RequestTimings[i]
		q := rowView(row)
		q.Start, q.End = 0, row.E2EMS
		out = append(out, q)
	}
	for i := range r.Failures {
		f := &r.Failures[i]
		q := requestView{Index: f.RequestIndex, PromptTokens: positive(float64(f.PlannedContextTokens)),
			TTFT: math.NaN(), TTFO: math.NaN(), TPOT: math.NaN(), E2E: math.NaN(),
			FirstOutput: math.NaN(), FirstContent: math.NaN(), Queue: math.NaN(), Scheduled: math.NaN()}
		if f.ResponseTiming != nil {
			t := rowView(f.ResponseTiming)
			q.FirstOutput, q.FirstContent, q.PromptTokens = t.FirstOutput, t.FirstContent, t.PromptTokens
		}
		q.Class = failureClassOf(*f)
		q.Message = f.ErrorType
		if f.ErrorMessage != "" {
			q.Message += ": " + f.ErrorMessage
		}
		if f.HTTPStatus != nil {
			q.Message = "HTTP " + strconv.Itoa(*f.HTTPStatus) + " " + q.Message
		}
		q.Start, q.End = 0, positive(f.ElapsedMS)
		out = append(out, q)
	}
	slices.SortStableFunc(out, func(a, b requestView) int { return a.Index - b.Index })
	for i := range out {
		sourceOf(&out[i], ext[out[i].Index])
	}
	offsets := len(ext) > 0 && len(out) > 0
	for _, q := range out {
		if e, ok := ext[q.Index]; !ok || (e.Outcome != artifact.OutcomeNeverSent && (e.SentMS == nil || e.EndMS == nil)) {
			offsets = false
			break
		}
	}
	if !offsets {
		return out, false
	}
	// Requests the run never sent have no bar on a time axis.
	out = slices.DeleteFunc(out, func(q requestView) bool { return ext[q.Index].Outcome == artifact.OutcomeNeverSent })
	for i := range out {
		e := ext[out[i].Index]
		q := &out[i]
		q.Start, q.End = *e.SentMS, *e.EndMS
		q.FirstOutput, q.FirstContent = ptrOrNaN(e.FirstOutputMS), ptrOrNaN(e.FirstContentMS)
		q.Queue, q.Scheduled = ptrOrNaN(e.QueueMS), ptrOrNaN(e.ScheduledMS)
	}
	return out, true
}

// sourceOf sets what anvil_go.requests says of q's source (NaN and 0
// without e); its schedule is set with the offsets (requestsOf).
func sourceOf(q *requestView, e *artifact.RequestDetail) {
	q.PlannedPrompt, q.Cached, q.Counted = math.NaN(), math.NaN(), math.NaN()
	if e == nil {
		return
	}
	intOrNaN := func(p *int) float64 {
		if p == nil {
			return math.NaN()
		}
		return float64(*p)
	}
	q.PlannedPrompt = float64(e.PlannedPromptTokens)
	q.Cached, q.Counted = intOrNaN(e.CachedPromptTokens), intOrNaN(e.CountedPromptTokens)
	if e.Turn != nil {
		q.Turn = *e.Turn
	}
}

// rowView is a successful timing row as a request view. A row without
// time_to_first_output_ms (older artifacts) reads as 0 there: its first
// output is then taken to be its first content. A row without token times
// (embeddings) has no TTFT, TTFO or first output (NaN: not drawn).
func rowView(row *artifact.TimingRow) requestView {
	q := requestView{Index: row.RequestIndex, TTFT: row.TTFTMS, TTFO: positive(row.TimeToFirstOutputMS),
		E2E: row.E2EMS, TPOT: ptrOrNaN(row.TPOTMS), Queue: math.NaN(), Scheduled: math.NaN()}
	if row.TPOTMS == nil {
		q.TPOT = ptrOrNaN(row.MeanInterTokenLatencyMS)
	}
	q.PromptTokens = positive(float64(row.PlannedContextTokens))
	if row.PromptTokens != nil {
		q.PromptTokens = float64(*row.PromptTokens)
	}
	q.FirstContent = row.TTFTMS
	q.FirstOutput = cmpOrNaN(q.TTFO, row.TTFTMS)
	if !row.TokenTimed() {
		// An answer without tokens (embeddings): its latency alone.
		q.TTFT, q.TTFO, q.FirstContent, q.FirstOutput = math.NaN(), math.NaN(), math.NaN(), math.NaN()
	}
	return q
}

// summaryFamilies are the distributions of the page's table, in order.
var summaryFamilies = []struct {
	name, unit, key string // key: the family's metrics key prefix
	dist            func(m *artifact.Metrics) *artifact.Distribution
}{
	{"TTFT", "ms", "ttft", func(m *artifact.Metrics) *artifact.Distribution { return &m.TTFT }},
	{"TTFO", "ms", "time_to_first_output", func(m *artifact.Metrics) *artifact.Distribution { return &m.TimeToFirstOutput }},
	{"TPOT", "ms", "tpot", func(m *artifact.Metrics) *artifact.Distribution {
		if m.TPOT.P50 == nil {
			return &m.MeanInterTokenLatencyMS // the legacy name of TPOT
		}
		return &m.TPOT
	}},
	{"E2E", "ms", "e2e", func(m *artifact.Metrics) *artifact.Distribution { return &m.E2E }},
	{"decode", "tok/s", "decode_tok_s", func(m *artifact.Metrics) *artifact.Distribution { return &m.DecodeTokS }},
	{"prefill (effective)", "tok/s", "effective_prefill_tok_s", func(m *artifact.Metrics) *artifact.Distribution { return &m.EffectivePrefillTokS }},
}

func summariesOf(m *artifact.Metrics) []metricSummary {
	out := make([]metricSummary, 0, len(summaryFamilies))
	for _, f := range summaryFamilies {
		d := f.dist(m)
		s := metricSummary{Name: f.name, Unit: f.unit, Samples: d.Samples,
			P50: ptrOrNaN(d.P50), P95: ptrOrNaN(d.P95), P99: ptrOrNaN(d.P99)}
		if !m.Has(f.key + "_samples") {
			s.Samples = -1 // a legacy artifact: percentiles without a count
		}
		out = append(out, s)
	}
	return out
}

// maxTokensText is the max_tokens of r's requests: the one the Workload
// sent, or, when a source set each request's own
// (anvil_go.requests[].planned_output_tokens), their range and median.
func maxTokensText(r *artifact.Report) string {
	var own []float64
	if r.AnvilGo != nil {
		for _, d := range r.AnvilGo.Requests {
			if d.PlannedOutputTokens != nil {
				own = append(own, float64(*d.PlannedOutputTokens))
			}
		}
	}
	if len(own) == 0 {
		return strconv.Itoa(r.MaxTokens)
	}
	slices.Sort(own)
	if own[0] == own[len(own)-1] {
		return fmt.Sprintf("%g, each request's own", own[0])
	}
	return fmt.Sprintf("each request's own: %g to %g, median %g", own[0], own[len(own)-1], stats.Median(own))
}

// identityFields is the workload part of a run header.
func identityFields(r *artifact.Report, ext extView) []viewField {
	var fs []viewField
	add := func(label, value string) { fs = append(fs, viewField{label, value}) }
	if api := artifact.APIOf(r); api != artifact.APIChat {
		add("api", api) // chat, the default, as the summary's workload line leaves it out
	}
	switch ctxs := slices.Sorted(maps.Keys(r.ContextDistribution)); {
	case r.ContextTokens != nil:
		add("context", strconv.Itoa(*r.ContextTokens)+" tokens")
	case ext.Traffic != nil && len(ctxs) > 0:
		// A trace's or a session's contexts are its own: too many to list.
		add("context", fmt.Sprintf("planned by the %s: %d sizes, %d to %d tokens", ext.Traffic.Kind, len(ctxs), ctxs[0], ctxs[len(ctxs)-1]))
	default:
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(r.ContextDistribution)) {
			parts = append(parts, fmt.Sprintf("%d×%d", r.ContextDistribution[k], k))
		}
		add("context", fmt.Sprintf("sampled (seed %d): %s tokens", r.ContextSeed, strings.Join(parts, ", ")))
	}
	if r.MaxContextTokens != nil {
		add("served context", strconv.Itoa(*r.MaxContextTokens)+" tokens")
	}
	if cw := windowDisagreement(r); cw != "" {
		// max_context_tokens is the window planned for: a declared one
		// above the server's is no served window, so say whose it is.
		add("context window", strings.TrimPrefix(cw, "context window "))
	}
	add("concurrency", strconv.Itoa(r.Concurrency))
	add("requests", strconv.Itoa(r.Requests))
	add("max tokens", maxTokensText(r))
	switch {
	case ext.Traffic != nil && ext.Traffic.Kind == artifact.WorkloadSessions:
		// A session's prompts share their history, not the Workload's prefix.
		add("prompt cache", "each turn opens with its session's history")
	case ext.Traffic != nil:
		add("prompt cache", "the trace's blocks: equal block ids are equal text")
	case r.Has("prompt_cache_mode"):
		prefix := sharedPrefixText(r)
		if r.PromptCacheMode == "unique" {
			prefix = "a request-specific header, nothing shared"
			if r.SharedPrefixTokens > 0 {
				prefix = fmt.Sprintf("a prefix of %d tokens unique to each request, nothing shared", r.SharedPrefixTokens)
			}
		}
		add("prompt cache", r.PromptCacheMode+", "+prefix)
	}
	if r.ServeFlags.SharedPrefixBurst {
		add("shared-prefix burst", "yes")
	}
	thinking := cmp.Or(r.ServeFlags.ThinkingMode, "not recorded")
	if r.ServeFlags.ReasoningEffort != nil {
		thinking += ", reasoning effort " + *r.ServeFlags.ReasoningEffort
	}
	add("thinking", thinking)
	if r.Has("sampling") {
		var parts []string
		for _, p := range []struct {
			name string
			f    artifact.SamplingField
		}{{"temperature", r.Sampling.Temperature}, {"top_p", r.Sampling.TopP}} {
			if p.f.Sent && p.f.EffectiveRequest != nil {
				parts = append(parts, p.name+" "+strconv.FormatFloat(*p.f.EffectiveRequest, 'g', -1, 64))
			}
		}
		add("sampling sent", cmp.Or(strings.Join(parts, ", "), "server defaults"))
	}
	if r.Has("request_canaries") {
		add("request canaries", map[bool]string{true: "on", false: "off"}[r.RequestCanaries])
	}
	if r.ResponseWords > 0 {
		add("response words", fmt.Sprintf("%d (%s)", r.ResponseWords, r.ControlledOutputPolicy))
	}
	if t := ext.Traffic; t != nil {
		add(t.Kind, trafficText(t))
	}
	if line := arrivalLine(r); line != "" {
		add("arrival", line)
	}
	return fs
}

// extOf is the page's view of the anvil_go object x (nil: an empty view)
// and its per-request details by request index.
func extOf(x *artifact.Extension) (extView, map[int]*artifact.RequestDetail) {
	var v extView
	if x == nil {
		return v, nil
	}
	if a := x.Arrival; a != nil {
		v.Arrival = &arrivalView{a.Process, a.RateRPS, ptrOrNaN(a.Burstiness), ptrOrNaN(a.OfferedRPS), ptrOrNaN(a.AchievedRPS)}
	}
	if s := x.SLO; s != nil {
		v.SLO = &sloView{TTFTMS: ptrOrNaN(s.TTFTMS), TPOTMS: ptrOrNaN(s.TPOTMS), E2EMS: ptrOrNaN(s.E2EMS),
			Attainment: s.Attainment, Attained: s.Attained, Passed: s.Passed, GoodputRPS: s.GoodputRPS}
	}
	if s := x.Search; s != nil {
		v.Search = &searchView{s.Kind, s.Probe, s.Value}
	}
	if w := x.Workload; w != nil {
		v.Traffic = trafficOf(w)
	}
	if c := x.ChunkTiming; c != nil {
		rule := fmt.Sprintf("gap > %s × the request's median gap and > %s ms", fmtNum(c.StallRule.Relative), fmtNum(c.StallRule.FloorMS))
		if c.StallRule.OverrideMS != nil {
			rule = fmt.Sprintf("gap > %s ms", fmtNum(*c.StallRule.OverrideMS))
		}
		q := c.ITLMS
		v.ITL = &itlView{q.P50, q.P90, q.P99, q.P999, q.Max, c.Gaps, c.Stalls, c.Exact, rule}
	}
	reqs := make(map[int]*artifact.RequestDetail, len(x.Requests))
	for i := range x.Requests {
		reqs[x.Requests[i].RequestIndex] = &x.Requests[i]
	}
	return v, reqs
}

// trafficOf is the page's view of anvil_go.workload.
func trafficOf(w *artifact.Workload) *trafficView {
	t := &trafficView{Kind: w.Kind, SpeedUp: math.NaN(), LagP50: math.NaN(), LagP99: math.NaN(), LagMax: math.NaN()}
	if s := w.Sessions; s != nil {
		t.Source = "recorded sessions"
		if s.Spec != nil {
			t.Source = *s.Spec
		}
	}
	if tr := w.Trace; tr != nil {
		if w.Sessions == nil {
			t.Source = tr.File
		}
		t.SHA256, t.SpeedUp = tr.SHA256, tr.SpeedUp
	}
	if l := w.SendLagMS; l != nil {
		t.LagP50, t.LagP99, t.LagMax = l.P50, l.P99, l.Max
	}
	return t
}

package reporters

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/anvilbench/anvil/stats"
)

// This file draws the run charts of the HTML page: latency CDFs, TTFT
// against prompt tokens and the per-request timeline.

// Aggregation limits: above them the page draws what the eye can tell, not
// every request, so 10,000 requests stay a page of a few hundred kilobytes.
const (
	// maxCDFPoints is the most steps one CDF series draws. A series of n
	// samples draws k = min(n, maxCDFPoints) steps: step j (1..k) rises to
	// j/k at the nearest-rank quantile sample[ceil(j*n/k)-1]. With k = n
	// that is the exact empirical CDF; otherwise the curve is never more
	// than 1/k of the height away from it, under a pixel for the charts'
	// 220-pixel plots.
	maxCDFPoints = 300
	// scatterCellPx is the thinning cell of the scatter: of the points of
	// one run that fall in the same scatterCellPx×scatterCellPx pixel
	// square, one is drawn (the markers are larger than the cell).
	scatterCellPx = 3
	// scatterMaxTitles is the most scatter points given their own hover
	// title; above it the series title says how many were drawn.
	scatterMaxTitles = 1000
	// timelineMaxRows is the most rows of the request timeline. Up to it
	// every request is one bar; above it consecutive requests (in send
	// order, or by index without send offsets) are grouped g = ceil(n /
	// timelineMaxRows) to a row, drawn at the group's median send, first
	// output, first content and end, with its failures as a mark at the
	// end of the row whose length is proportional to their share.
	timelineMaxRows = 300
)

// Chart sizes in pixels.
const (
	chartW     = 560
	chartH     = 300
	wideChartW = 1120
)

// The phase colours of the timeline: neutral grey for waiting, Okabe–Ito
// orange and blue for reasoning and content.
const (
	colorWaiting   = "#BBBBBB"
	colorReasoning = "#E69F00"
	colorContent   = "#0072B2"
	// colorQueue is an open-loop request's wait for the in-flight cap,
	// from when it was due to its send: lighter than waiting.
	colorQueue = "#E4E4E4"
	// colorSteady shades the steady-state window behind the bars.
	colorSteady = "#009E73"
)

// classColor is the timeline colour of a failure class.
func classColor(class string) string {
	switch class {
	case "http_error":
		return "#CC79A7"
	case "timeout":
		return "#000000"
	case "cancelled":
		return "#777777"
	case "stream_validation_failed":
		return "#009E73"
	case "request_canary_failed":
		return "#56B4E9"
	case "controlled_output_failed":
		return "#882255"
	case "runner_error":
		return "#F0E442"
	case "embeddings_invalid":
		return "#0072B2"
	default: // request_error and anything unclassified
		return "#D55E00"
	}
}

// latencyMetrics are the CDF charts of the page.
var latencyMetrics = []struct {
	id, name, long, unit string
	of                   func(q *requestView) float64
}{
	{"ttft", "TTFT", "time to first content", "ms", func(q *requestView) float64 { return q.TTFT }},
	{"ttfo", "TTFO", "time to first output (reasoning or content)", "ms", func(q *requestView) float64 { return q.TTFO }},
	{"tpot", "TPOT", "generation time per output token", "ms", func(q *requestView) float64 { return q.TPOT }},
	{"e2e", "E2E", "request sent to end of stream", "ms", func(q *requestView) float64 { return q.E2E }},
}

// cdfSeries is one run's samples of a metric, sorted.
type cdfSeries struct {
	label  string
	style  seriesStyle
	values []float64
}

// nearestRank is the nearest-rank p quantile (0 < p <= 1) of sorted.
func nearestRank(sorted []float64, p float64) float64 {
	k := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(k, len(sorted)-1))]
}

// sortedKnown returns the known values of f over the successful requests
// of v, sorted.
func sortedKnown(v *runView, f func(q *requestView) float64) []float64 {
	var out []float64
	for i := range v.Requests {
		if q := &v.Requests[i]; !q.failed() {
			if x := f(q); known(x) {
				out = append(out, x)
			}
		}
	}
	slices.Sort(out)
	return out
}

// cdfMarks are the percentiles marked on every CDF.
var cdfMarks = []struct {
	name string
	p    float64
}{{"p50", 0.50}, {"p95", 0.95}, {"p99", 0.99}}

// writeCDF draws the empirical CDFs of series on one chart, each with its
// p50, p95 and p99 marked. It writes nothing when no series has samples.
func writeCDF(b *strings.Builder, id, name, long, unit string, series []cdfSeries) bool {
	hi := 0.0
	var desc []string
	for _, s := range series {
		if len(s.values) == 0 {
			continue
		}
		hi = math.Max(hi, s.values[len(s.values)-1])
		desc = append(desc, fmt.Sprintf("%s: %d samples, p50 %s %s, p95 %s %s, p99 %s %s", s.label, len(s.values),
			fmtNum(nearestRank(s.values, .5)), unit, fmtNum(nearestRank(s.values, .95)), unit,
			fmtNum(nearestRank(s.values, .99)), unit))
	}
	if len(desc) == 0 {
		return false
	}
	lo, hi := niceDomain(0, hi, true)
	var legend []legendEntry
	for _, s := range series {
		if len(s.values) > 0 {
			legend = append(legend, legendEntry{Label: s.label, Style: s.style})
		}
	}
	c := beginChart(b, chartSpec{
		ID: id, W: chartW, H: chartH, Legend: legend,
		Title:  fmt.Sprintf("%s (%s): empirical CDF", name, long),
		Desc:   "Share of successful requests at or below each value. " + strings.Join(desc, "; ") + ".",
		XLabel: fmt.Sprintf("%s (%s)", name, unit), YLabel: "share of requests (%)",
		X: scale{lo: lo, hi: hi}, Y: scale{lo: 0, hi: 1},
		YFmt: func(v float64) string { return fmtNum(v * 100) },
	})
	for _, m := range cdfMarks {
		y := c.y.px(m.p)
		ly := y - 3 // p95 sits close under p99: its label goes below its line
		if m.name == "p95" {
			ly = y + 10
		}
		fmt.Fprintf(b, `<line class="ref" x1="%s" y1="%s" x2="%s" y2="%s"/><text class="tick" x="%s" y="%s" text-anchor="end">%s</text>`,
			px(c.left), px(y), px(c.right), px(y), px(c.right-2), px(ly), m.name)
	}
	for _, s := range series {
		n := len(s.values)
		if n == 0 {
			continue
		}
		k := min(n, maxCDFPoints)
		fmt.Fprintf(b, `<g class="series" data-series="%s"><title>%s: %s CDF, %d samples`, esc(s.label), esc(s.label), esc(name), n)
		if k < n {
			fmt.Fprintf(b, " (drawn as %d quantile steps)", k)
		}
		var d strings.Builder
		fmt.Fprintf(&d, "M%s %s", px(c.x.px(s.values[0])), px(c.y.px(0)))
		for j := 1; j <= k; j++ {
			v := s.values[(j*n+k-1)/k-1] // ceil(j*n/k) - 1
			fmt.Fprintf(&d, "H%sV%s", px(c.x.px(v)), px(c.y.px(float64(j)/float64(k))))
		}
		fmt.Fprintf(b, `</title><path class="line" d="%s" stroke="%s" stroke-dasharray="%s"/>`, d.String(), s.style.Color, s.style.Dash)
		for _, m := range cdfMarks {
			v := nearestRank(s.values, m.p)
			fmt.Fprintf(b, `<g class="mark"><title>%s %s %s = %s %s</title>`, esc(s.label), esc(name), m.name, fmtNum(v), unit)
			marker(b, s.style.Marker, c.x.px(v), c.y.px(m.p), 4, s.style.Color)
			b.WriteString(`</g>`)
		}
		b.WriteString(`</g>`)
	}
	c.end()
	return true
}

// writeScatter draws TTFT against prompt tokens, one marker shape and
// colour per run, thinned to one point per scatterCellPx cell per run.
func writeScatter(b *strings.Builder, views []runView) bool {
	type pt struct {
		x, y float64
		idx  int
	}
	pts := make([][]pt, len(views))
	xlo, xhi, yhi := math.Inf(1), math.Inf(-1), 0.0
	for i := range views {
		for _, q := range views[i].Requests {
			if q.failed() || !known(q.PromptTokens) || !known(q.TTFT) {
				continue
			}
			pts[i] = append(pts[i], pt{q.PromptTokens, q.TTFT, q.Index})
			xlo, xhi, yhi = math.Min(xlo, q.PromptTokens), math.Max(xhi, q.PromptTokens), math.Max(yhi, q.TTFT)
		}
	}
	if math.IsInf(xlo, 1) {
		return false
	}
	xlo, xhi = niceDomain(xlo, xhi, false)
	ylo, yhi := niceDomain(0, yhi, true)
	total := 0
	var legend []legendEntry
	for i, p := range pts {
		total += len(p)
		if len(p) > 0 {
			legend = append(legend, legendEntry{Label: views[i].Label, Style: styleOf(i)})
		}
	}
	c := beginChart(b, chartSpec{
		ID: "scatter-ttft-prompt", W: wideChartW, H: chartH + 40, Legend: legend,
		Title: "TTFT against prompt tokens",
		Desc: fmt.Sprintf("One point per successful request (%d), TTFT in ms against the prompt tokens the server counted "+
			"(the planned context where it reported none). Prefill cost rises with the prompt; prompt-cache hits sit low.", total),
		XLabel: "prompt tokens (usage; planned where not reported)", YLabel: "TTFT (ms)",
		X: scale{lo: xlo, hi: xhi}, Y: scale{lo: ylo, hi: yhi},
	})
	for i, ps := range pts {
		if len(ps) == 0 {
			continue
		}
		st := styleOf(i)
		seen := map[[2]int]bool{}
		var body strings.Builder
		drawn := 0
		for _, p := range ps {
			x, y := c.x.px(p.x), c.y.px(p.y)
			cell := [2]int{int(x / scatterCellPx), int(y / scatterCellPx)}
			if seen[cell] {
				continue
			}
			seen[cell] = true
			drawn++
			if len(ps) <= scatterMaxTitles {
				fmt.Fprintf(&body, `<g><title>%s request %d: %s prompt tokens, TTFT %s ms</title>`,
					esc(views[i].Label), p.idx, fmtNum(p.x), fmtNum(p.y))
				marker(&body, st.Marker, x, y, 3.5, st.Color)
				body.WriteString(`</g>`)
			} else {
				marker(&body, st.Marker, x, y, 3.5, st.Color)
			}
		}
		fmt.Fprintf(b, `<g class="series" data-series="%s" fill-opacity="0.7"><title>%s: %d requests, %d points drawn</title>%s</g>`,
			esc(views[i].Label), esc(views[i].Label), len(ps), drawn, body.String())
	}
	c.end()
	return true
}

// timelineRow is one bar of the timeline: one request, or the medians of
// a group of requests.
type timelineRow struct {
	first, last                        int     // ordinals of the requests in the row
	sched, start, output, content, end float64 // sched: due (open loop), else NaN
	failClass, failMsg                 string  // a single failed request
	failShare                          float64 // binned rows: share of failed requests
	failCounts                         []classCount
	indexFirst, indexLast, succeeded   int
}

// timelineRows orders the requests of v (by send offset, else by index)
// and groups them into at most timelineMaxRows rows.
func timelineRows(v *runView) ([]timelineRow, int) {
	reqs := slices.Clone(v.Requests)
	switch {
	case v.Scheduled:
		slices.SortStableFunc(reqs, func(a, b requestView) int { return compareFloat(a.Scheduled, b.Scheduled) })
	case v.Offsets:
		slices.SortStableFunc(reqs, func(a, b requestView) int { return compareFloat(a.Start, b.Start) })
	}
	g := max(1, (len(reqs)+timelineMaxRows-1)/timelineMaxRows)
	var rows []timelineRow
	for lo := 0; lo < len(reqs); lo += g {
		grp := reqs[lo:min(lo+g, len(reqs))]
		r := timelineRow{first: lo, last: lo + len(grp) - 1, indexFirst: grp[0].Index, indexLast: grp[len(grp)-1].Index}
		if g == 1 {
			q := grp[0]
			r.sched, r.start, r.output, r.content, r.end = q.Scheduled, q.Start, q.FirstOutput, q.FirstContent, q.End
			if q.failed() {
				r.failClass, r.failMsg = q.Class, q.Message
			}
			rows = append(rows, r)
			continue
		}
		var sch, st, out, con, end []float64
		counts := map[string]int{}
		for _, q := range grp {
			if q.failed() {
				counts[q.Class]++
				continue
			}
			sch, st, out, con, end = append(sch, q.Scheduled), append(st, q.Start), append(out, q.FirstOutput), append(con, q.FirstContent), append(end, q.End)
		}
		r.sched, r.start, r.output, r.content, r.end = median(sch), median(st), median(out), median(con), median(end)
		r.succeeded = len(st)
		r.failShare = float64(len(grp)-len(st)) / float64(len(grp))
		for _, k := range slices.Sorted(maps.Keys(counts)) {
			r.failCounts = append(r.failCounts, classCount{k, counts[k]})
		}
		rows = append(rows, r)
	}
	return rows, g
}

// writeTimeline draws the requests of v as horizontal bars: waiting for the
// first output, reasoning, content; failures in their class colour.
func writeTimeline(b *strings.Builder, id string, v *runView) bool {
	if len(v.Requests) == 0 {
		return false
	}
	rows, g := timelineRows(v)
	hi := timelineHi(rows)
	plotH := math.Max(60, math.Min(360, 10*float64(len(rows))))
	xl, yl := "time since the request was sent (ms)", "request index"
	layout := "Without send offsets in the artifact, each request is drawn from its own send (time 0), one row per request index."
	desc := "Each bar runs from send to end of stream: grey waiting for the first output, orange reasoning, blue content; failures in their class colour. "
	switch {
	case v.Scheduled:
		xl, yl = "time since the run started (ms)", "requests in scheduled order"
		desc = "Open loop: each bar starts when the request was due (its scheduled time), so the bars arrive at the offered rate; light grey is the wait for the in-flight cap until the send, then grey waiting for the first output, orange reasoning, blue content; failures in their class colour from their send. "
		layout = "Bars are placed at their scheduled offsets from the run start."
	case v.Offsets:
		xl, yl = "time since the run started (ms)", "requests in send order"
		layout = "Bars are placed at their send offsets from the run start."
	}
	if v.Offsets && known(v.SteadyFrom) {
		layout += fmt.Sprintf(" The green band is the steady-state window, %s to %s ms.", fmtNum(v.SteadyFrom), fmtNum(v.SteadyTo))
	}
	grouping := ""
	if g > 1 {
		grouping = fmt.Sprintf(" %d requests are drawn as %d rows of %d consecutive requests at their median times; the mark at a row's end is its share of failures.",
			len(v.Requests), len(rows), g)
	}
	c := beginChart(b, chartSpec{
		ID: id, W: wideChartW, H: plotH + marginTop + marginBottom,
		Title:  v.Label + ": requests over time",
		Desc:   desc + layout + grouping,
		XLabel: xl, YLabel: yl,
		X: scale{lo: 0, hi: hi}, Y: scale{lo: float64(len(v.Requests)), hi: 0},
		Legend: phaseLegend(v),
	})
	rowH := (c.bottom - c.top) / float64(len(rows))
	barH := math.Max(0.8, rowH*0.8)
	rect := func(x0, x1, y float64, fill string) {
		if !known(x0) || !known(x1) || x1 < x0 {
			return
		}
		fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"/>`,
			px(c.x.px(x0)), px(y), px(math.Max(0.5, c.x.px(x1)-c.x.px(x0))), px(barH), fill)
	}
	if v.Offsets && known(v.SteadyFrom) {
		fmt.Fprintf(b, `<rect class="steady" x="%s" y="%s" width="%s" height="%s" fill="%s" fill-opacity="0.12"><title>steady window %s to %s ms</title></rect>`,
			px(c.x.px(v.SteadyFrom)), px(c.top), px(c.x.px(v.SteadyTo)-c.x.px(v.SteadyFrom)), px(c.bottom-c.top), colorSteady,
			fmtNum(v.SteadyFrom), fmtNum(v.SteadyTo))
	}
	b.WriteString(`<g class="bars">`)
	for _, r := range rows {
		y := c.y.px(float64(r.first)) + (rowH-barH)/2
		b.WriteString(`<g><title>`)
		switch {
		case g > 1:
			fmt.Fprintf(b, "requests %d–%d (indexes %d–%d): %d succeeded, ", r.first, r.last, r.indexFirst, r.indexLast, r.succeeded)
			if v.Scheduled {
				fmt.Fprintf(b, "median due %s ms, ", fmtNum(r.sched))
			}
			fmt.Fprintf(b, "median send %s ms, first output %s ms, first content %s ms, end %s ms",
				fmtNum(r.start), fmtNum(r.output), fmtNum(r.content), fmtNum(r.end))
			for _, fc := range r.failCounts {
				fmt.Fprintf(b, "; %d %s", fc.Count, esc(fc.Class))
			}
		case r.failClass != "":
			fmt.Fprintf(b, "request %d failed (%s) after %s ms: %s", r.indexFirst, esc(r.failClass), fmtNum(r.end-r.start), esc(r.failMsg))
		default:
			fmt.Fprintf(b, "request %d: ", r.indexFirst)
			if v.Scheduled {
				fmt.Fprintf(b, "due %s ms, ", fmtNum(r.sched))
			}
			fmt.Fprintf(b, "sent %s ms, first output %s ms, first content %s ms, end %s ms",
				fmtNum(r.start), fmtNum(r.output), fmtNum(r.content), fmtNum(r.end))
		}
		b.WriteString(`</title>`)
		if v.Scheduled && r.start > r.sched {
			rect(r.sched, r.start, y, colorQueue)
		}
		if r.failClass != "" {
			end := r.end
			if !known(end) {
				end = r.start
			}
			rect(r.start, end, y, classColor(r.failClass))
		} else {
			rect(r.start, r.output, y, colorWaiting)
			rect(r.output, r.content, y, colorReasoning)
			rect(r.content, r.end, y, colorContent)
			if r.failShare > 0 {
				x := c.x.px(cmpOrNaN(r.end, r.start)) + 2
				fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"/>`,
					px(x), px(y), px(math.Max(1, 60*r.failShare)), px(barH), classColor(r.failCounts[0].Class))
			}
		}
		b.WriteString(`</g>`)
	}
	b.WriteString(`</g>`)
	c.end()
	writeServerTimeline(b, id, v, hi)
	return true
}

// timelineHi is the end of the timeline's time axis: the last send or end
// of its rows, rounded up to a tick.
func timelineHi(rows []timelineRow) float64 {
	hi := 0.0
	for _, r := range rows {
		hi = math.Max(hi, math.Max(cmpOrNaN(r.end, 0), r.start))
	}
	_, hi = niceDomain(0, hi, true)
	return hi
}

// phaseLegend is the timeline's legend: the phases and the failure
// classes the run has, each a colour swatch.
func phaseLegend(v *runView) []legendEntry {
	es := []legendEntry{{Label: "waiting", Fill: colorWaiting}, {Label: "reasoning", Fill: colorReasoning}, {Label: "content", Fill: colorContent}}
	if v.Scheduled {
		es = append([]legendEntry{{Label: "queued", Fill: colorQueue}}, es...)
	}
	for _, f := range v.Failures {
		es = append(es, legendEntry{Label: f.Class, Fill: classColor(f.Class)})
	}
	return es
}

// median of the known values of xs (NaN for none).
func median(xs []float64) float64 {
	xs = slices.DeleteFunc(slices.Clone(xs), func(v float64) bool { return !known(v) })
	if len(xs) == 0 {
		return math.NaN()
	}
	slices.Sort(xs)
	return stats.Median(xs)
}

func compareFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

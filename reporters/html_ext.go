package reporters

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// This file draws what the anvil_go extension adds to runs: the per-chunk
// inter-token latency, open-loop queue times, and the throughput and
// latency curves of an SLO sweep.

// writeITL draws the chunk ITL percentiles of every run that has them, one
// row per run on a log time axis, with the stall count.
func writeITL(b *strings.Builder, views []runView) bool {
	var rows []int
	lo, hi := math.Inf(1), 0.0
	for i := range views {
		if t := views[i].Ext.ITL; t != nil {
			rows = append(rows, i)
			lo, hi = math.Min(lo, math.Max(t.P50, 1e-3)), math.Max(hi, t.Max)
		}
	}
	if len(rows) == 0 {
		return false
	}
	lo, hi = logDomain(lo, hi)
	var desc []string
	for _, i := range rows {
		t := views[i].Ext.ITL
		desc = append(desc, fmt.Sprintf("%s: p50 %s, p90 %s, p99 %s, p99.9 %s, max %s ms over %d gaps, %d stalls",
			views[i].Label, fmtNum(t.P50), fmtNum(t.P90), fmtNum(t.P99), fmtNum(t.P999), fmtNum(t.Max), t.Gaps, t.Stalls))
	}
	h := float64(marginTop+marginBottom) + 36*float64(len(rows)) + 20
	c := beginChart(b, chartSpec{
		ID: "itl", W: wideChartW, H: h,
		Title:  "Inter-token latency per output chunk",
		Desc:   "Percentiles of the gaps between consecutive output chunks over the successful requests. " + strings.Join(desc, "; ") + ".",
		XLabel: "gap between output chunks (ms, log scale)", YLabel: "run",
		X: scale{lo: lo, hi: hi, log: true}, Y: scale{lo: float64(len(rows)), hi: 0},
		YFmt: func(float64) string { return "" },
	})
	rowH := (c.bottom - c.top) / float64(len(rows))
	for k, i := range rows {
		t, st := views[i].Ext.ITL, styleOf(i)
		y := c.y.px(float64(k)) + rowH/2
		exact := "exact nearest rank"
		if !t.Exact {
			exact = "from a relative-error sketch"
		}
		fmt.Fprintf(b, `<g class="series" data-series="%s"><title>%s: %d gaps (%s), %d stalls (%s)</title>`,
			esc(views[i].Label), esc(views[i].Label), t.Gaps, exact, t.Stalls, esc(t.StallRule))
		fmt.Fprintf(b, `<path class="line" d="M%s %sH%s" stroke="%s" stroke-dasharray="%s"/>`,
			px(c.x.px(t.P50)), px(y), px(c.x.px(t.Max)), st.Color, st.Dash)
		for _, p := range []struct {
			name string
			v    float64
		}{{"p50", t.P50}, {"p90", t.P90}, {"p99", t.P99}, {"p99.9", t.P999}, {"max", t.Max}} {
			x := c.x.px(p.v)
			fmt.Fprintf(b, `<g class="mark"><title>%s ITL %s = %s ms</title>`, esc(views[i].Label), p.name, fmtNum(p.v))
			marker(b, st.Marker, x, y, 4.5, st.Color)
			fmt.Fprintf(b, `<text class="tick" x="%s" y="%s" text-anchor="middle">%s</text></g>`, px(x), px(y-8), p.name)
		}
		fmt.Fprintf(b, `<text class="tick" x="%s" y="%s">%s · %d stalls</text></g>`,
			px(c.left+4), px(y+14), esc(views[i].Label), t.Stalls)
	}
	c.end()
	return true
}

// writeQueue draws the CDF of open-loop queue times (sent - scheduled)
// of the open-loop runs (a closed loop's requests are scheduled when a
// worker takes them, so their queue time is only the prompt's build).
func writeQueue(b *strings.Builder, views []runView) bool {
	var series []cdfSeries
	for i := range views {
		if views[i].Ext.Arrival == nil {
			continue
		}
		vals := sortedKnown(&views[i], func(q *requestView) float64 { return q.Queue })
		if len(vals) > 0 {
			series = append(series, cdfSeries{views[i].Label, styleOf(i), vals})
		}
	}
	return writeCDF(b, "queue", "queue time", "waiting for the in-flight cap, open loop", "ms", series)
}

// writeScheduledTTFT draws the CDF of the open-loop runs' TTFT from the
// scheduled time (anvil_go.requests scheduled_ttft_ms, successes).
func writeScheduledTTFT(b *strings.Builder, views []runView) bool {
	var series []cdfSeries
	for i := range views {
		if len(views[i].SchedTTFT) > 0 {
			series = append(series, cdfSeries{views[i].Label, styleOf(i), views[i].SchedTTFT})
		}
	}
	return writeCDF(b, "sched-ttft", "TTFT from schedule", "time to first content from when the request was due", "ms", series)
}

// sweep is the probes of one SLO search, by probed value.
type sweep struct {
	kind   string
	probes []int // indexes into the views, by value
	best   int   // the probe with the highest passing value, -1 if none
}

// sweepsOf groups the runs that are probes of a search by kind; a kind
// with fewer than two probes is no curve.
func sweepsOf(views []runView) []sweep {
	byKind := map[string][]int{}
	for i := range views {
		if s := views[i].Ext.Search; s != nil {
			byKind[s.Kind] = append(byKind[s.Kind], i)
		}
	}
	var out []sweep
	for _, kind := range slices.Sorted(maps.Keys(byKind)) {
		idx := byKind[kind]
		if len(idx) < 2 {
			continue
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			return cmp.Compare(views[a].Ext.Search.Value, views[b].Ext.Search.Value)
		})
		sw := sweep{kind: kind, probes: idx, best: -1}
		for _, i := range idx {
			if s := views[i].Ext.SLO; s != nil && s.Passed {
				sw.best = i
			}
		}
		out = append(out, sw)
	}
	return out
}

// sweepAxis is the x axis label of a search kind.
func sweepAxis(kind string) string {
	if kind == "rate" {
		return "offered rate (requests/s)"
	}
	return "concurrency (requests in flight)"
}

// writeSweep draws, for one search, output throughput and each bounded
// latency (p50 and p99 of the metric, with the SLO bound) against the
// probed value; probes that met the SLO are filled, the best passing
// value (the knee) is marked on every chart.
func writeSweep(b *strings.Builder, views []runView, sw sweep) int {
	xs := make([]float64, len(sw.probes))
	for k, i := range sw.probes {
		xs[k] = views[i].Ext.Search.Value
	}
	xlo, xhi := niceDomain(xs[0], xs[len(xs)-1], true)
	type curve struct {
		label string
		of    func(v *runView) float64
	}
	type panel struct {
		id, title, ylabel string
		bound             float64
		curves            []curve
	}
	panels := []panel{{id: "throughput", title: "output throughput", ylabel: "output throughput (tok/s)", bound: math.NaN(),
		curves: []curve{{"throughput", func(v *runView) float64 { return v.Throughput }}}}}
	var slo *sloView
	for _, i := range sw.probes {
		if s := views[i].Ext.SLO; s != nil {
			slo = s
			break
		}
	}
	for _, m := range []struct {
		name  string
		bound func(s *sloView) float64
	}{{"TTFT", func(s *sloView) float64 { return s.TTFTMS }}, {"TPOT", func(s *sloView) float64 { return s.TPOTMS }},
		{"E2E", func(s *sloView) float64 { return s.E2EMS }}} {
		bound := math.NaN()
		if slo != nil {
			bound = m.bound(slo)
		}
		if !known(bound) && (slo != nil || m.name != "TTFT") {
			continue // an SLO chart per set bound; without an SLO, TTFT
		}
		name := m.name
		panels = append(panels, panel{id: strings.ToLower(name), title: name + " latency", ylabel: name + " (ms)", bound: bound,
			curves: []curve{
				{name + " p50", func(v *runView) float64 { return summaryValue(v, name, 50) }},
				{name + " p99", func(v *runView) float64 { return summaryValue(v, name, 99) }},
			}})
	}
	// The server's state per probe, so the knee has its cause beside it.
	if slices.ContainsFunc(sw.probes, func(i int) bool { return views[i].Server != nil }) {
		panels = append(panels,
			panel{id: "server-queue", title: "server requests (max)", ylabel: "requests", bound: math.NaN(), curves: []curve{
				{"waiting", func(v *runView) float64 { return serverMax(v, func(s *serverView) *gaugeView { return s.Waiting }) }},
				{"running", func(v *runView) float64 { return serverMax(v, func(s *serverView) *gaugeView { return s.Running }) }},
			}},
			panel{id: "server-kv", title: "server KV-cache use (max)", ylabel: "KV-cache use (%)", bound: math.NaN(), curves: []curve{
				{"KV-cache use", func(v *runView) float64 { return 100 * serverMax(v, func(s *serverView) *gaugeView { return s.KV }) }},
			}})
	}
	n := 0
	for _, p := range panels {
		yhi := cmpOrNaN(p.bound, 0)
		for _, cv := range p.curves {
			for _, i := range sw.probes {
				if y := cv.of(&views[i]); known(y) {
					yhi = math.Max(yhi, y)
				}
			}
		}
		ylo, yhi := niceDomain(0, yhi, true)
		desc := fmt.Sprintf("%s of each probe against the probed %s; filled markers met the SLO.", p.title, sw.kind)
		if sw.best >= 0 {
			desc += fmt.Sprintf(" Best passing value: %s.", fmtNum(views[sw.best].Ext.Search.Value))
		} else {
			desc += " No probe met the SLO."
		}
		if known(p.bound) {
			desc += fmt.Sprintf(" SLO bound %s ms.", fmtNum(p.bound))
		}
		var legend []legendEntry
		for k, cv := range p.curves {
			legend = append(legend, legendEntry{Label: cv.label, Style: styleOf(k)})
		}
		c := beginChart(b, chartSpec{
			ID: "sweep-" + sw.kind + "-" + p.id, W: chartW, H: chartH, Legend: legend,
			Title: fmt.Sprintf("%s against %s", p.title, sw.kind), Desc: desc,
			XLabel: sweepAxis(sw.kind), YLabel: p.ylabel,
			X: scale{lo: xlo, hi: xhi}, Y: scale{lo: ylo, hi: yhi},
		})
		if known(p.bound) {
			y := c.y.px(p.bound)
			fmt.Fprintf(b, `<g class="slo"><title>SLO: %s at most %s ms</title><line class="bound" x1="%s" y1="%s" x2="%s" y2="%s"/><text class="tick" x="%s" y="%s" text-anchor="end">SLO %s ms</text></g>`,
				esc(p.title), fmtNum(p.bound), px(c.left), px(y), px(c.right), px(y), px(c.right-2), px(y-4), fmtNum(p.bound))
		}
		if sw.best >= 0 {
			v := views[sw.best].Ext.Search.Value
			x := c.x.px(v)
			fmt.Fprintf(b, `<g class="knee"><title>best passing %s: %s</title><line class="kneeline" x1="%s" y1="%s" x2="%s" y2="%s"/><text class="tick" x="%s" y="%s">best passing %s</text></g>`,
				esc(sw.kind), fmtNum(v), px(x), px(c.top), px(x), px(c.bottom), px(x+4), px(c.top+12), fmtNum(v))
		}
		for k, cv := range p.curves {
			st := styleOf(k)
			var d, marks strings.Builder
			for _, i := range sw.probes {
				y := cv.of(&views[i])
				if !known(y) {
					continue
				}
				x, py := c.x.px(views[i].Ext.Search.Value), c.y.px(y)
				fmt.Fprintf(&d, "%s%s %s", map[bool]string{true: "M", false: "L"}[d.Len() == 0], px(x), px(py))
				passed, verdict := false, "no SLO"
				if s := views[i].Ext.SLO; s != nil {
					passed = s.Passed
					verdict = fmt.Sprintf("attained %s of %s: %s", fmtNum(s.Attained), fmtNum(s.Attainment),
						map[bool]string{true: "SLO met", false: "SLO missed"}[s.Passed])
				}
				fill := "#FFFFFF"
				if passed {
					fill = st.Color
				}
				fmt.Fprintf(&marks, `<g class="mark"><title>%s at %s %s: %s (%s)</title><circle cx="%s" cy="%s" r="4.5" fill="%s" stroke="%s" stroke-width="1.5"/></g>`,
					esc(cv.label), esc(sw.kind), fmtNum(views[i].Ext.Search.Value), fmtNum(y), esc(verdict), px(x), px(py), fill, st.Color)
			}
			fmt.Fprintf(b, `<g class="series" data-series="%s"><path class="line" d="%s" stroke="%s" stroke-dasharray="%s"/>%s</g>`,
				esc(cv.label), d.String(), st.Color, st.Dash, marks.String())
		}
		c.end()
		n++
	}
	return n
}

// summaryValue is the p50 or p99 the artifact records for the named
// metric of v.
func summaryValue(v *runView, name string, p int) float64 {
	s := v.summaryOf(name)
	switch {
	case s == nil:
		return math.NaN()
	case p == 50:
		return s.P50
	default:
		return s.P99
	}
}

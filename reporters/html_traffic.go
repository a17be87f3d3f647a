package reporters

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// This file draws what a trace replay and sessions add to a run
// (anvil_go.workload): for a replay, the load the trace offered over time
// (requests/s and prompt tokens/s in trafficBinMS bins of the scheduled
// time) above the TTFT of the requests over the same time axis; for
// sessions, TTFT and the cached share of the prompt by turn.

// trafficBinMS is the width of an offered-load bin: 1 s.
const trafficBinMS = 1000

// trafficText is the run header's line of a replay or sessions.
func trafficText(t *trafficView) string {
	parts := []string{t.Source}
	if t.SHA256 != "" {
		parts = append(parts, "sha256 "+t.SHA256[:min(12, len(t.SHA256))]+"…")
	}
	if known(t.SpeedUp) {
		parts = append(parts, "speed-up "+fmtNum(t.SpeedUp))
	}
	if known(t.LagP50) {
		parts = append(parts, fmt.Sprintf("send lag p50 %s, p99 %s, max %s ms", fmtNum(t.LagP50), fmtNum(t.LagP99), fmtNum(t.LagMax)))
	}
	return strings.Join(parts, ", ")
}

// writeTrafficSection writes the section of the runs that replayed a
// trace or ran sessions, if any.
func writeTrafficSection(b *strings.Builder, views []runView) {
	var inner strings.Builder
	for i := range views {
		if t := views[i].Ext.Traffic; t != nil && t.Kind == "trace" {
			fmt.Fprintf(&inner, `<h3>%s: offered load and TTFT over time</h3><div class="charts">`, esc(views[i].Label))
			writeOfferedLoad(&inner, i, &views[i])
			inner.WriteString(`</div>`)
		}
	}
	var turns strings.Builder
	if writeByTurn(&turns, views) {
		inner.WriteString(`<h3>Sessions by turn</h3><div class="charts">`)
		inner.WriteString(turns.String())
		inner.WriteString(`</div>`)
	}
	if inner.Len() == 0 {
		return
	}
	b.WriteString(`<section id="traffic"><h2>Trace replay and sessions</h2>`)
	b.WriteString(inner.String())
	b.WriteString("</section>\n")
}

// loadBin is one trafficBinMS bin of a replay's scheduled time.
type loadBin struct {
	requests, promptTokens float64
	ttft                   []float64 // the successful requests scheduled in it
}

// loadBins bins the requests of v by scheduled offset; nil when none has
// one.
func loadBins(v *runView) []loadBin {
	var bins []loadBin
	for i := range v.Requests {
		q := &v.Requests[i]
		if !known(q.Scheduled) {
			continue
		}
		k := int(math.Max(q.Scheduled, 0) / trafficBinMS)
		for len(bins) <= k {
			bins = append(bins, loadBin{})
		}
		bins[k].requests++
		if known(q.PlannedPrompt) {
			bins[k].promptTokens += q.PlannedPrompt
		}
		if !q.failed() && known(q.TTFT) {
			bins[k].ttft = append(bins[k].ttft, q.TTFT)
		}
	}
	return bins
}

// writeOfferedLoad draws run i's offered requests/s, offered prompt
// tokens/s and TTFT over the scheduled time, on one time axis.
func writeOfferedLoad(b *strings.Builder, i int, v *runView) {
	bins := loadBins(v)
	if len(bins) == 0 {
		b.WriteString(`<p class="note">The artifact records no scheduled offsets.</p>`)
		return
	}
	st := styleOf(i)
	xhi := float64(len(bins))
	id := fmt.Sprintf("traffic-%d", i+1)
	steps := func(name, unit string, of func(loadBin) float64) {
		peak := 0.0
		for _, bin := range bins {
			peak = math.Max(peak, of(bin))
		}
		_, yhi := niceDomain(0, math.Max(peak, 1), true)
		c := beginChart(b, chartSpec{ID: id + "-" + name, W: wideChartW, H: chartH - 60,
			Title: "Offered " + unit + " (1 s bins)",
			Desc: fmt.Sprintf("%s: the trace's %s per second of its scheduled time, over %d bins, peak %s.",
				v.Label, unit, len(bins), fmtNum(peak)),
			XLabel: "scheduled time (s from the start of the measured phase)", YLabel: unit,
			X: scale{lo: 0, hi: xhi}, Y: scale{lo: 0, hi: yhi}, YFmt: fmtNum})
		var d strings.Builder
		for k, bin := range bins {
			if k == 0 {
				fmt.Fprintf(&d, "M%s %s", px(c.x.px(0)), px(c.y.px(of(bin))))
			} else {
				fmt.Fprintf(&d, "V%s", px(c.y.px(of(bin))))
			}
			fmt.Fprintf(&d, "H%s", px(c.x.px(float64(k+1))))
		}
		fmt.Fprintf(b, `<g class="series" data-series="%s"><title>%s: offered %s, peak %s</title><path class="line" d="%s" stroke="%s" stroke-dasharray="%s"/></g>`,
			esc(v.Label), esc(v.Label), esc(unit), fmtNum(peak), d.String(), st.Color, st.Dash)
		c.end()
	}
	steps("rps", "requests/s", func(l loadBin) float64 { return l.requests * 1000 / trafficBinMS })
	steps("tps", "prompt tokens/s", func(l loadBin) float64 { return l.promptTokens * 1000 / trafficBinMS })

	yhi := 0.0
	n := 0
	for _, bin := range bins {
		for _, t := range bin.ttft {
			yhi = math.Max(yhi, t)
			n++
		}
	}
	if n == 0 {
		b.WriteString(`<p class="note">No request succeeded: no TTFT to draw.</p>`)
		return
	}
	_, yhi = niceDomain(0, yhi, true)
	c := beginChart(b, chartSpec{ID: id + "-ttft", W: wideChartW, H: chartH,
		Title: "TTFT over time, by scheduled time",
		Desc: fmt.Sprintf("%s: TTFT of the %d successful requests by the second they were due; the line is each bin's median, the band its p10 to p90.",
			v.Label, n),
		XLabel: "scheduled time (s from the start of the measured phase)", YLabel: "TTFT (ms)",
		X: scale{lo: 0, hi: xhi}, Y: scale{lo: 0, hi: yhi}})
	var line, band strings.Builder
	for k, bin := range bins {
		if len(bin.ttft) == 0 {
			continue
		}
		s := slices.Sorted(slices.Values(bin.ttft))
		x0, x1 := c.x.px(float64(k)), c.x.px(float64(k+1))
		lo, hi := c.y.px(nearestRank(s, .1)), c.y.px(nearestRank(s, .9))
		fmt.Fprintf(&band, `<rect x="%s" y="%s" width="%s" height="%s"><title>second %d: %d requests, TTFT p10 %s, p50 %s, p90 %s ms</title></rect>`,
			px(x0), px(hi), px(x1-x0), px(math.Max(lo-hi, 1)), k, len(s), fmtNum(nearestRank(s, .1)), fmtNum(nearestRank(s, .5)), fmtNum(nearestRank(s, .9)))
		cmd := "L"
		if line.Len() == 0 {
			cmd = "M"
		}
		fmt.Fprintf(&line, "%s%s %s", cmd, px((x0+x1)/2), px(c.y.px(nearestRank(s, .5))))
	}
	fmt.Fprintf(b, `<g class="series" data-series="%s"><g fill="%s" fill-opacity="0.18">%s</g><path class="line" d="%s" stroke="%s" stroke-dasharray="%s"/></g>`,
		esc(v.Label), st.Color, band.String(), line.String(), st.Color, st.Dash)
	c.end()
}

// turnStat is what one turn index of a session run shows.
type turnStat struct {
	ttft           []float64
	cached, prompt float64 // summed over the turn's successful requests that report both
}

// turnStats groups the successful requests of v by session turn; nil when
// none has one.
func turnStats(v *runView) []turnStat {
	var out []turnStat
	for i := range v.Requests {
		q := &v.Requests[i]
		if q.Turn < 1 || q.failed() {
			continue
		}
		for len(out) < q.Turn {
			out = append(out, turnStat{})
		}
		t := &out[q.Turn-1]
		if known(q.TTFT) {
			t.ttft = append(t.ttft, q.TTFT)
		}
		if known(q.Cached) && known(q.Counted) && q.Counted > 0 {
			t.cached += q.Cached
			t.prompt += q.Counted
		}
	}
	return out
}

// writeByTurn draws, for every run of sessions, the median TTFT and the
// cached share of the prompt tokens by turn index, one line per run.
func writeByTurn(b *strings.Builder, views []runView) bool {
	stats := make([][]turnStat, len(views))
	turns := 0
	for i := range views {
		if t := views[i].Ext.Traffic; t != nil && t.Kind == "sessions" {
			stats[i] = turnStats(&views[i])
			turns = max(turns, len(stats[i]))
		}
	}
	if turns == 0 {
		return false
	}
	draw := func(id, title, desc, ylabel string, yhi float64, of func(turnStat) float64, unit string) {
		_, yhi = niceDomain(0, math.Max(yhi, 1e-9), true)
		var legend []legendEntry
		for i, ts := range stats {
			if len(ts) > 0 {
				legend = append(legend, legendEntry{Label: views[i].Label, Style: styleOf(i)})
			}
		}
		c := beginChart(b, chartSpec{ID: id, W: chartW, H: chartH, Title: title, Desc: desc, Legend: legend,
			XLabel: "turn", YLabel: ylabel, X: scale{lo: 0.5, hi: float64(turns) + 0.5}, Y: scale{lo: 0, hi: yhi},
			XFmt: func(v float64) string {
				if v != math.Trunc(v) || v < 1 {
					return ""
				}
				return fmt.Sprint(int(v))
			}})
		for i, ts := range stats {
			if len(ts) == 0 {
				continue
			}
			st := styleOf(i)
			var d, marks strings.Builder
			for k, t := range ts {
				y := of(t)
				if !known(y) {
					continue
				}
				x, yp := c.x.px(float64(k+1)), c.y.px(y)
				cmd := "L"
				if d.Len() == 0 {
					cmd = "M"
				}
				fmt.Fprintf(&d, "%s%s %s", cmd, px(x), px(yp))
				fmt.Fprintf(&marks, `<g><title>%s turn %d: %s %s</title>`, esc(views[i].Label), k+1, fmtNum(y), esc(unit))
				marker(&marks, st.Marker, x, yp, 4, st.Color)
				marks.WriteString(`</g>`)
			}
			fmt.Fprintf(b, `<g class="series" data-series="%s"><path class="line" d="%s" stroke="%s" stroke-dasharray="%s"/>%s</g>`,
				esc(views[i].Label), d.String(), st.Color, st.Dash, marks.String())
		}
		c.end()
	}
	ttft := func(t turnStat) float64 {
		if len(t.ttft) == 0 {
			return math.NaN()
		}
		return nearestRank(slices.Sorted(slices.Values(t.ttft)), .5)
	}
	share := func(t turnStat) float64 {
		if t.prompt == 0 {
			return math.NaN()
		}
		return 100 * t.cached / t.prompt
	}
	yTTFT := 0.0
	for _, ts := range stats {
		for _, t := range ts {
			if v := ttft(t); known(v) {
				yTTFT = math.Max(yTTFT, v)
			}
		}
	}
	draw("turns-ttft", "TTFT by turn (median)",
		"Median TTFT of the successful requests of each turn index, one line per run of sessions: a prefix cache that keeps the history keeps later turns' TTFT down.",
		"TTFT p50 (ms)", yTTFT, ttft, "ms")
	draw("turns-cached", "Cached share of the prompt by turn",
		"The server's cached prompt tokens over its counted prompt tokens, summed over each turn index's successful requests that report both, in percent.",
		"cached prompt tokens (%)", 100, share, "%")
	return true
}

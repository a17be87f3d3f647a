package reporters

import (
	"fmt"
	"io"
	"strings"
)

// This file writes the HTML page around the charts: run headers, sections,
// the summary table, and the page's CSS.

// contentSecurityPolicy is the policy the page declares in a meta tag: it
// may load nothing (no script, font, frame or connection), style only from
// its own inline CSS and images only from data: URLs. A browser enforcing
// it shows that the page needs nothing from anywhere.
const contentSecurityPolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

// pageCSS is the page's style: screen and print.
const pageCSS = `
:root{color-scheme:light}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1a1a;background:#fff;margin:0 auto;max-width:1160px;padding:16px 20px}
h1{font-size:22px;margin:4px 0 8px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:15px;margin:14px 0 6px}
.runs{display:flex;flex-wrap:wrap;gap:12px}
.run{border:1px solid #ddd;border-radius:6px;padding:8px 12px;flex:1 1 340px;break-inside:avoid}
.run h3{display:flex;align-items:center;gap:8px;margin-top:2px}
dl{display:grid;grid-template-columns:max-content 1fr;gap:1px 12px;margin:0}
dt{color:#555}dd{margin:0;overflow-wrap:anywhere}
.bad{color:#B23A00;font-weight:600}.good{color:#00603F;font-weight:600}
.charts{display:flex;flex-wrap:wrap;gap:8px}
svg.chart{background:#fff;max-width:100%;height:auto;break-inside:avoid}
svg text{font:11px system-ui,sans-serif;fill:#333}
svg .ctitle{font-size:13px;font-weight:600;fill:#1a1a1a}
svg .label{font-size:12px;fill:#1a1a1a}
svg .grid{stroke:#e6e6e6;stroke-width:1}
svg .axis{stroke:#555;fill:none;stroke-width:1}
svg .ref{stroke:#999;stroke-width:1;stroke-dasharray:1 3}
svg .bound{stroke:#222;stroke-width:1.5;stroke-dasharray:6 3}
svg .kneeline{stroke:#666;stroke-width:1.5;stroke-dasharray:2 3}
svg .line{fill:none;stroke-width:2}
table{border-collapse:collapse;margin:6px 0}th,td{padding:2px 10px;text-align:right;border-bottom:1px solid #eee}
th:first-child,td:first-child,th.l,td.l{text-align:left}
caption{text-align:left;color:#555;padding:4px 0}
.msg{font-family:ui-monospace,monospace;font-size:12px;overflow-wrap:anywhere;text-align:left;max-width:600px}
p.note{color:#555;margin:4px 0}
@media print{body{max-width:none;padding:0;font-size:11px}h2{break-after:avoid}.run,svg.chart,table{break-inside:avoid}a{color:inherit}}
`

// writePage writes the page for views.
func writePage(w io.Writer, views []runView) error {
	for i := range views {
		views[i].Label = fmt.Sprintf("run %d", i+1)
	}
	var b strings.Builder
	title := "anvil-go capacity report: " + views[0].Model
	if len(views) > 1 {
		title = fmt.Sprintf("anvil-go capacity report: %d runs", len(views))
	}
	fmt.Fprintf(&b, `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"/>
<meta http-equiv="Content-Security-Policy" content="%s"/>
<meta name="viewport" content="width=device-width, initial-scale=1"/>
<title>%s</title><style>%s</style></head><body>
<h1>%s</h1>
`, esc(contentSecurityPolicy), esc(title), pageCSS, esc(title))

	b.WriteString(`<section id="runs"><h2>Runs</h2><div class="runs">`)
	for i := range views {
		writeRunHeader(&b, i, &views[i])
	}
	b.WriteString("</div></section>\n")

	b.WriteString(`<section id="latency"><h2>Latency distributions</h2><p class="note">Empirical CDFs over the successful requests; p50, p95 and p99 are marked on each run's curve.</p><div class="charts">`)
	for _, m := range latencyMetrics {
		series := make([]cdfSeries, len(views))
		for i := range views {
			series[i] = cdfSeries{views[i].Label, styleOf(i), sortedKnown(&views[i], m.of)}
		}
		if !writeCDF(&b, "cdf-"+m.id, m.name, m.long, m.unit, series) {
			fmt.Fprintf(&b, `<p class="note">%s: the artifacts record no per-request values.</p>`, esc(m.name))
		}
	}
	b.WriteString("</div></section>\n")

	b.WriteString(`<section id="prefill"><h2>TTFT against prompt tokens</h2>`)
	if !writeScatter(&b, views) {
		b.WriteString(`<p class="note">The artifacts record no per-request TTFT.</p>`)
	}
	b.WriteString("</section>\n")

	b.WriteString(`<section id="timeline"><h2>Requests over time</h2>`)
	for i := range views {
		if !writeTimeline(&b, fmt.Sprintf("timeline-%d", i+1), &views[i]) {
			fmt.Fprintf(&b, `<p class="note">%s: the artifact records no requests (an older generation keeps only the metrics).</p>`, esc(views[i].Label))
		}
	}
	b.WriteString("</section>\n")

	writeTrafficSection(&b, views)
	writeExtSections(&b, views)
	writeSummaryTable(&b, views)
	writeFailureTable(&b, views)
	b.WriteString(`<footer><p class="note">Written by anvilreport html. Self-contained: inline SVG and CSS, no script, nothing fetched.</p></footer>
</body></html>
`)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeRunHeader writes the identity, eligibility and failures of run i.
func writeRunHeader(b *strings.Builder, i int, v *runView) {
	st := styleOf(i)
	fmt.Fprintf(b, `<div class="run" id="run-%d"><h3><svg class="swatch" width="34" height="12" role="img" aria-label="line style of %s"><line x1="1" y1="6" x2="33" y2="6" stroke="%s" stroke-width="3" stroke-dasharray="%s"/></svg>%s · %s</h3><dl>`,
		i+1, esc(v.Label), st.Color, st.Dash, esc(v.Label), esc(orDash(v.Model)))
	field := func(label, value string) {
		fmt.Fprintf(b, `<dt>%s</dt><dd>%s</dd>`, esc(label), esc(value))
	}
	field("benchmark", orDash(v.Benchmark))
	field("run id", orDash(v.RunID))
	field("started", orDash(v.StartedAt))
	field("engine", orDash(v.Engine))
	field("gpu", orDash(v.GPU))
	field("protocol", orDash(v.Protocol))
	for _, f := range v.Identity {
		field(f.Label, f.Value)
	}
	if known(v.WallMS) {
		field("wall clock", fmtNum(v.WallMS/1000)+" s")
	}
	class := map[string]string{"yes": "good", "no": "bad"}[v.Eligible]
	fmt.Fprintf(b, `<dt>performance eligible</dt><dd class="%s">%s</dd>`, class, esc(v.Eligible))
	if v.Audit != "" {
		fmt.Fprintf(b, `<dt>client audit</dt><dd class="%s">%s</dd>`, map[bool]string{true: "bad", false: "good"}[v.Suspect], esc(v.Audit))
	}
	if v.Probes != "" {
		field("probe requests", v.Probes)
	}
	if v.Energy != "" {
		field("energy", v.Energy)
	}
	if v.Spec != "" {
		field("speculation", v.Spec)
	}
	if v.Steady != "" {
		fmt.Fprintf(b, `<dt>steady state</dt><dd class="%s">%s</dd>`, map[bool]string{true: "good", false: "bad"}[known(v.SteadyFrom)], esc(v.Steady))
	}
	if v.Unsent > 0 {
		field("outcome", fmt.Sprintf("%d planned, %d sent, %d succeeded, %d failed, %d never sent", v.Planned, v.Planned-v.Unsent, v.Succeeded, v.Failed, v.Unsent))
	} else {
		field("outcome", fmt.Sprintf("%d planned, %d succeeded, %d failed", v.Planned, v.Succeeded, v.Failed))
	}
	if len(v.Failures) > 0 {
		var parts []string
		for _, f := range v.Failures {
			parts = append(parts, fmt.Sprintf("%s %d", f.Class, f.Count))
		}
		fmt.Fprintf(b, `<dt>failures by class</dt><dd class="bad">%s</dd>`, esc(strings.Join(parts, ", ")))
	}
	if known(v.Throughput) {
		field("throughput", fmtNum(v.Throughput)+" output tok/s")
	}
	b.WriteString("</dl></div>")
}

// writeExtSections writes the anvil_go charts the runs have, if any.
func writeExtSections(b *strings.Builder, views []runView) {
	var inner strings.Builder
	if writeITL(&inner, views) {
		inner.WriteString(`<p class="note">A stall is a gap far above its request's typical gap; the rule is in each run's hover title.</p>`)
	}
	var queue strings.Builder
	if writeQueue(&queue, views) {
		inner.WriteString(`<h3>Open-loop queue time</h3>`)
		inner.WriteString(queue.String())
	}
	var sched strings.Builder
	if writeScheduledTTFT(&sched, views) {
		inner.WriteString(`<h3>Open-loop TTFT from the scheduled time</h3><p class="note">What a user arriving at the offered rate waits: from when the request was due, its wait for the in-flight cap included (the TTFT above runs from the send).</p>`)
		inner.WriteString(sched.String())
	}
	for _, sw := range sweepsOf(views) {
		fmt.Fprintf(&inner, `<h3>SLO search over %s</h3><div class="charts">`, esc(sw.kind))
		writeSweep(&inner, views, sw)
		inner.WriteString(`</div>`)
	}
	if inner.Len() == 0 {
		return
	}
	b.WriteString(`<section id="anvil-go"><h2>Chunk timing, queueing and SLO search</h2>`)
	b.WriteString(inner.String())
	b.WriteString("</section>\n")
}

// writeSummaryTable writes p50/p95/p99 per metric and run, as the
// artifacts record them: the text alternative of the charts.
func writeSummaryTable(b *strings.Builder, views []runView) {
	b.WriteString(`<section id="summary"><h2>Summary: p50, p95, p99</h2><table><caption>Percentiles per metric as recorded in each artifact (nearest rank over the successful requests); - where an artifact does not record one.</caption>
<thead><tr><th scope="col">run</th><th scope="col" class="l">metric</th><th scope="col">unit</th><th scope="col">samples</th><th scope="col">p50</th><th scope="col">p95</th><th scope="col">p99</th></tr></thead><tbody>`)
	for i := range views {
		for _, s := range views[i].Summary {
			n := "-"
			if s.Samples >= 0 {
				n = fmt.Sprint(s.Samples)
			}
			fmt.Fprintf(b, `<tr><th scope="row">%s</th><td class="l">%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>`,
				esc(views[i].Label), esc(s.Name), esc(s.Unit), n, fmtNum(s.P50), fmtNum(s.P95), fmtNum(s.P99))
		}
	}
	b.WriteString("</tbody></table></section>\n")
}

// maxFailureRows is the most failures the failure table lists per run;
// the timeline's hover titles carry every one.
const maxFailureRows = 50

// writeFailureTable lists the failed requests with their messages.
func writeFailureTable(b *strings.Builder, views []runView) {
	total := 0
	for i := range views {
		total += views[i].Failed
	}
	if total == 0 {
		return
	}
	b.WriteString(`<section id="failures"><h2>Failed requests</h2><table><thead><tr><th scope="col">run</th><th scope="col">request</th><th scope="col" class="l">class</th><th scope="col" class="l">error</th></tr></thead><tbody>`)
	for i := range views {
		shown := 0
		for _, q := range views[i].Requests {
			if !q.failed() {
				continue
			}
			if shown == maxFailureRows {
				fmt.Fprintf(b, `<tr><td>%s</td><td></td><td class="l" colspan="2">… %d more failures</td></tr>`, esc(views[i].Label), views[i].Failed-shown)
				break
			}
			shown++
			fmt.Fprintf(b, `<tr><td>%s</td><td>%d</td><td class="l">%s</td><td class="msg">%s</td></tr>`,
				esc(views[i].Label), q.Index, esc(q.Class), esc(q.Message))
		}
	}
	b.WriteString("</tbody></table></section>\n")
}

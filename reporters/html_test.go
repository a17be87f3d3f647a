package reporters

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// legacyPath is an artifact of the oldest generation: metrics only.
const legacyPath = "../testdata/corpus/docs/findings/2026-07-10-blackwell-local-model-bakeoff-evidence/candidate-gemma4-e4b-llamacpp-throughput-8k.json"

// syntheticRun is a deterministic run of n planned requests at the given
// concurrency: prompts between 1k and 33k tokens (TTFT growing with them,
// every seventh request a fast prompt-cache hit), a reasoning phase, and
// every 25th request failing, in turn as a timeout, an HTTP error and a
// stream validation failure.
func syntheticRun(t testing.TB, n, conc int, seed uint64) *artifact.Report {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	r := &artifact.Report{
		Schema: artifact.Schema, RunID: fmt.Sprintf("benchmark-2026010%dT000000Z", seed%10), Model: "synthetic-model",
		Engine: new("fake"), GPU: new("none"), Requests: n, Concurrency: conc, MaxTokens: 256,
		ContextTokens: new(32768), MaxContextTokens: new(65536), PromptCacheMode: "unique",
		ContextDistribution: map[int]int{32768: n}, ControlledOutputPolicy: "observe",
		ServeFlags: artifact.ServeFlags{ThinkingMode: "default"}, WallClockMS: float64(n) * 40,
		StartedAt: "2026-01-01T00:00:00Z", FinishedAt: "2026-01-01T00:10:00Z",
	}
	classes := []artifact.FailureClass{artifact.FailureTimeout, artifact.FailureHTTPError, artifact.FailureStreamValidation}
	for i := range n {
		prompt := 1000 + rng.IntN(32000)
		if i%25 == 24 {
			c := classes[(i/25)%len(classes)]
			f := artifact.Failure{RequestIndex: i, PlannedContextTokens: prompt, FailureClass: c,
				ErrorType: string(c), ErrorMessage: fmt.Sprintf("request %d failed", i), ElapsedMS: 100 + rng.Float64()*900}
			if c == artifact.FailureHTTPError {
				f.HTTPStatus = new(503)
			}
			r.Failures = append(r.Failures, f)
			continue
		}
		ttfo := 50 + float64(prompt)*0.05*(0.8+0.4*rng.Float64())
		if i%7 == 3 {
			ttfo = 30 + 10*rng.Float64() // a prompt-cache hit
		}
		ttft := ttfo + 200 + 400*rng.Float64()
		out := 50 + rng.IntN(200)
		e2e := ttft + float64(out)*(8+4*rng.Float64())
		gen := e2e - ttfo
		tpot := gen / float64(out-1)
		r.RequestTimings = append(r.RequestTimings, artifact.TimingRow{
			RequestIndex: i, PlannedContextTokens: 32768, PromptTokens: new(prompt), OutputTokens: new(out),
			OutputTokenSource: artifact.SourceUsage, ContentChunks: out / 2, ReasoningChunks: out / 2,
			TimeToFirstOutputMS: ttfo, TTFTMS: ttft, E2EMS: e2e, GenerationMS: gen, VisibleGenerationMS: e2e - ttft,
			EffectivePrefillTokS: new(float64(prompt) / ttfo * 1000), DecodeTokS: new(float64(out-1) / gen * 1000),
			TPOTMS: new(tpot), MeanTimePerOutputTokenMS: new(tpot), MeanInterTokenLatencyMS: new(tpot),
		})
	}
	r.Completed, r.Failed, r.ResponsesReceived = len(r.RequestTimings), len(r.Failures), n
	require.NoError(t, r.Recompute())
	return r
}

// renderHTML writes the page of reports.
func renderHTML(t testing.TB, reports ...*artifact.Report) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, WriteHTML(&buf, reports...))
	return buf.Bytes()
}

// chartRE finds the charts of a page.
var chartRE = regexp.MustCompile(`(?s)<svg class="chart".*?</svg>`)

// chartStructure is what the golden files pin of one chart.
type chartStructure struct {
	id, label string
	first     string // the first element inside the svg
	elements  map[string]int
	axes      []string // axis label texts
	series    []string // data-series names
}

// parseCharts parses every chart of page as XML (which also proves each
// is well formed) and summarizes it.
func parseCharts(t testing.TB, page []byte) []chartStructure {
	t.Helper()
	var out []chartStructure
	for _, svg := range chartRE.FindAll(page, -1) {
		d := xml.NewDecoder(bytes.NewReader(svg))
		cs := chartStructure{elements: map[string]int{}}
		inLabel := false
		for {
			tok, err := d.Token()
			if err == io.EOF {
				break
			}
			require.NoError(t, err, "chart is not well-formed XML:\n%s", svg)
			switch tok := tok.(type) {
			case xml.StartElement:
				if cs.elements["svg"] == 1 && cs.first == "" {
					cs.first = tok.Name.Local
				}
				cs.elements[tok.Name.Local]++
				attr := func(name string) string {
					for _, a := range tok.Attr {
						if a.Name.Local == name {
							return a.Value
						}
					}
					return ""
				}
				if tok.Name.Local == "svg" {
					cs.id, cs.label = attr("id"), attr("aria-label")
				}
				if s := attr("data-series"); s != "" {
					cs.series = append(cs.series, s)
				}
				inLabel = tok.Name.Local == "text" && attr("class") == "label"
			case xml.CharData:
				if inLabel {
					cs.axes = append(cs.axes, string(tok))
				}
			case xml.EndElement:
				inLabel = false
			}
		}
		out = append(out, cs)
	}
	return out
}

// structureText is the golden form of a page's charts.
func structureText(t testing.TB, page []byte) []byte {
	var b bytes.Buffer
	for _, cs := range parseCharts(t, page) {
		fmt.Fprintf(&b, "chart %s %q\n  axes: %q\n  series: %q\n  elements:", cs.id, cs.label, cs.axes, cs.series)
		for _, k := range slices.Sorted(maps.Keys(cs.elements)) {
			fmt.Fprintf(&b, " %s=%d", k, cs.elements[k])
		}
		b.WriteString("\n")
	}
	for _, tag := range []string{"<section", "<table", "<tr>", `<div class="run"`} {
		fmt.Fprintf(&b, "page %s: %d\n", tag, bytes.Count(page, []byte(tag)))
	}
	return b.Bytes()
}

func TestWriteHTMLGolden(t *testing.T) {
	for _, tc := range []struct {
		golden  string
		reports func(t *testing.T) []*artifact.Report
	}{
		{"html/seed.golden", func(t *testing.T) []*artifact.Report { return []*artifact.Report{loadReport(t, seedPath)} }},
		{"html/legacy.golden", func(t *testing.T) []*artifact.Report { return []*artifact.Report{loadReport(t, legacyPath)} }},
		{"html/saturated.golden", func(t *testing.T) []*artifact.Report { return []*artifact.Report{loadReport(t, saturatedPath)} }},
		{"html/two-runs.golden", func(t *testing.T) []*artifact.Report {
			return []*artifact.Report{loadReport(t, seedPath), syntheticRun(t, 60, 4, 1)}
		}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			benchGolden(t, tc.golden, structureText(t, renderHTML(t, tc.reports(t)...)))
		})
	}
}

// TestWriteHTMLAxesAndText: every chart has a title, a description and
// two axis labels with units; the legacy artifact (no rows) says so in
// text instead of drawing empty charts.
func TestWriteHTMLAxesAndText(t *testing.T) {
	page := renderHTML(t, loadReport(t, seedPath), syntheticRun(t, 60, 4, 1))
	charts := parseCharts(t, page)
	require.Len(t, charts, 4+1+2) // CDFs, scatter, one timeline per run
	for _, c := range charts {
		require.Equal(t, "title", c.first, "%s: the chart's title is its first child", c.id)
		require.Equal(t, 1, c.elements["desc"], c.id)
		require.Len(t, c.axes, 2, c.id)
		require.NotEmpty(t, c.label, c.id)
	}
	require.Equal(t, []string{"TTFT (ms)", "share of requests (%)"}, charts[0].axes)
	require.Equal(t, []string{"run 1", "run 2"}, charts[0].series, "runs overlaid on the CDF")

	legacy := string(renderHTML(t, loadReport(t, legacyPath)))
	require.Contains(t, legacy, "TTFT: the artifacts record no per-request values.")
	require.Contains(t, legacy, `<td class="l">TTFT</td><td>ms</td><td>-</td><td>60.6</td><td>1507</td><td>-</td>`)
	require.Contains(t, legacy, "performance eligible</dt><dd class=\"\">not recorded")
}

// TestCDFIsDownsampled: a series of 10,000 samples draws maxCDFPoints
// steps; a small one draws one step per sample.
func TestCDFIsDownsampled(t *testing.T) {
	for _, tc := range []struct{ n, steps int }{{7, 7}, {maxCDFPoints, maxCDFPoints}, {10000, maxCDFPoints}} {
		vals := make([]float64, tc.n)
		for i := range vals {
			vals[i] = float64(i)
		}
		var b strings.Builder
		require.True(t, writeCDF(&b, "x", "X", "x", "ms", []cdfSeries{{"run 1", styleOf(0), vals}}))
		d := regexp.MustCompile(`<path class="line" d="([^"]*)"`).FindStringSubmatch(b.String())
		require.NotNil(t, d)
		require.Equal(t, tc.steps, strings.Count(d[1], "V"), "n=%d", tc.n)
	}
}

// TestNearestRank pins the percentile definition the marks use.
func TestNearestRank(t *testing.T) {
	s := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	require.Equal(t, 5.0, nearestRank(s, .5))
	require.Equal(t, 10.0, nearestRank(s, .95))
	require.Equal(t, 1.0, nearestRank(s, 0.01))
	require.Equal(t, 10.0, nearestRank(s, 1))
}

// TestTimelineGroupsLargeRuns: above timelineMaxRows requests the timeline
// draws at most timelineMaxRows rows of medians.
func TestTimelineGroupsLargeRuns(t *testing.T) {
	for _, tc := range []struct{ n, rows, group int }{{10, 10, 1}, {timelineMaxRows, timelineMaxRows, 1}, {1000, 250, 4}, {10000, 295, 34}} {
		v, err := viewOf(syntheticRun(t, tc.n, 8, 3))
		require.NoError(t, err)
		rows, g := timelineRows(&v)
		require.Equal(t, tc.rows, len(rows), "n=%d", tc.n)
		require.Equal(t, tc.group, g, "n=%d", tc.n)
		if g > 1 {
			failed := 0
			for _, r := range rows {
				failed += int(math.Round(r.failShare * float64(r.last-r.first+1)))
			}
			require.Equal(t, v.Failed, failed, "every failure is counted in its row")
		}
	}
}

// TestHTMLSize: 10,000 requests render to a page well under 1.5 MB.
func TestHTMLSize(t *testing.T) {
	seed := renderHTML(t, loadReport(t, seedPath))
	big := renderHTML(t, syntheticRun(t, 10000, 64, 5))
	t.Logf("page sizes: seed %d bytes, 10,000 requests %d bytes", len(seed), len(big))
	require.Less(t, len(big), 1_500_000)
	require.Less(t, len(seed), 100_000)
}

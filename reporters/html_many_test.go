package reporters

import (
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// manyRunsDir, when set, is where TestBrowserManyRuns leaves its pages
// and screenshots for a person to look at.
var manyRunsDir = flag.String("many-runs-dir", "", "write the pages and screenshots of TestBrowserManyRuns here")

// manyRuns is n runs as a sweep of benchmarks writes them: every third an
// open loop (so the charts from the schedule are drawn too), each named
// by the benchmark that made it.
func manyRuns(t testing.TB, n int) []*artifact.Report {
	var out []*artifact.Report
	for i := range n {
		var r *artifact.Report
		if i%3 == 2 {
			r = syntheticOpenLoop(t, 30, 4, 20)
		} else {
			r = syntheticRun(t, 30, 4, uint64(i+1))
			r.AnvilGo = &artifact.Extension{Version: 1, Run: &artifact.RunSummary{SentRequests: 30}}
		}
		name := fmt.Sprintf("BenchmarkCapacityConcurrency/ctx=32768/conc=%d-2", i+1)
		r.AnvilGo.Run.Benchmark = &name
		out = append(out, r)
	}
	return out
}

// chartGeometry is what TestManyRunsLayout checks of one chart: its size,
// the lines of its title and where each legend entry's label sits.
type chartGeometry struct {
	id          string
	w, h        float64
	titleLines  []string
	legendTexts []struct {
		x, y float64
		text string
	}
	axisLabelY float64 // the x axis label's baseline
}

// chartGeometries reads the geometry of every chart of page.
func chartGeometries(t *testing.T, page []byte) []chartGeometry {
	t.Helper()
	var out []chartGeometry
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err, s)
		return v
	}
	for _, svg := range chartRE.FindAll(page, -1) {
		d := xml.NewDecoder(bytes.NewReader(svg))
		var g chartGeometry
		var stack []string // element names, with the class of a g
		var cur *xml.StartElement
		for {
			tok, err := d.Token()
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			switch tok := tok.(type) {
			case xml.StartElement:
				attr := func(name string) string {
					for _, a := range tok.Attr {
						if a.Name.Local == name {
							return a.Value
						}
					}
					return ""
				}
				name := tok.Name.Local
				if name == "g" || name == "text" {
					name += "." + attr("class")
				}
				stack = append(stack, name)
				switch {
				case tok.Name.Local == "svg":
					g.id = attr("id")
					vb := strings.Fields(attr("viewBox"))
					g.w, g.h = num(vb[2]), num(vb[3])
					require.Equal(t, vb[2], attr("width"))
					require.Equal(t, vb[3], attr("height"))
				case name == "text.label" && g.axisLabelY == 0:
					g.axisLabelY = num(attr("y"))
				}
				c := tok.Copy()
				cur = &c
			case xml.CharData:
				if len(stack) == 0 || cur == nil {
					continue
				}
				text := string(tok)
				parent := ""
				if len(stack) > 1 {
					parent = stack[len(stack)-2]
				}
				switch top := stack[len(stack)-1]; {
				case top == "tspan" && parent == "text.ctitle":
					g.titleLines = append(g.titleLines, text)
				case top == "text.tick" && parent == "g.legend":
					var x, y float64
					for _, a := range cur.Attr {
						switch a.Name.Local {
						case "x":
							x = num(a.Value)
						case "y":
							y = num(a.Value)
						}
					}
					g.legendTexts = append(g.legendTexts, struct {
						x, y float64
						text string
					}{x, y, text})
				}
			case xml.EndElement:
				stack = stack[:len(stack)-1]
				cur = nil
			}
		}
		out = append(out, g)
	}
	return out
}

// TestManyRunsLayout: with 1, 18 and 64 runs every chart's legend lists
// each run once, every entry inside the chart and below its x axis label
// (never over the plot or the axis), in rows that wrap; every title line
// fits the chart's width; and each run's card names its benchmark.
func TestManyRunsLayout(t *testing.T) {
	for _, n := range []int{1, 18, 64} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			page := renderHTML(t, manyRuns(t, n)...)
			for i := range n {
				require.Contains(t, string(page), fmt.Sprintf(`<dt>benchmark</dt><dd>BenchmarkCapacityConcurrency/ctx=32768/conc=%d-2</dd>`, i+1))
			}
			for _, g := range chartGeometries(t, page) {
				for _, l := range g.titleLines {
					require.LessOrEqual(t, marginLeft+titleCharW*float64(utf8.RuneCountInString(l)), g.w-marginRight+20,
						"%s: title line %q is wider than the chart", g.id, l)
				}
				require.NotEmpty(t, g.titleLines, g.id)
				seen := map[string]bool{}
				rows := map[float64]bool{}
				for _, e := range g.legendTexts {
					require.False(t, seen[e.text], "%s: %q twice in the legend", g.id, e.text)
					seen[e.text] = true
					rows[e.y] = true
					require.GreaterOrEqual(t, e.x-legendSwW+8, 0.0, "%s: %q", g.id, e.text)
					require.LessOrEqual(t, e.x+legendCharW*float64(utf8.RuneCountInString(e.text)), g.w, "%s: %q past the right edge", g.id, e.text)
					require.Greater(t, e.y-12, g.axisLabelY, "%s: %q overlaps the axis label or the plot", g.id, e.text)
					require.LessOrEqual(t, e.y, g.h, "%s: %q below the chart", g.id, e.text)
				}
				if strings.HasPrefix(g.id, "cdf-") || g.id == "scatter-ttft-prompt" {
					require.Len(t, seen, n, "%s: one entry per run", g.id)
					if n == 64 {
						require.Greater(t, len(rows), 1, "%s: 64 runs wrap", g.id)
					}
				}
			}
		})
	}
}

// TestBrowserManyRuns renders the pages of 1, 18 and 64 runs in headless
// Chromium: it parses them with every chart, logs nothing, and draws
// them (-many-runs-dir keeps the pages and screenshots to look at).
func TestBrowserManyRuns(t *testing.T) {
	bin := chromium(t)
	for _, n := range []int{1, 18, 64} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			dir := t.TempDir()
			if *manyRunsDir != "" {
				dir = *manyRunsDir
			}
			page := renderHTML(t, manyRuns(t, n)...)
			path := filepath.Join(dir, fmt.Sprintf("runs-%d.html", n))
			require.NoError(t, os.WriteFile(path, page, 0o644))
			dom, logs := headless(t, bin, path, "--dump-dom")
			require.Equal(t, len(chartRE.FindAll(page, -1)), strings.Count(dom, `<svg class="chart"`))
			require.Empty(t, consoleLine.FindAllString(logs, -1), "console messages")
			shot := filepath.Join(dir, fmt.Sprintf("runs-%d.png", n))
			// Tall enough for the run cards (three a row) and the latency charts.
			height := 3000 + 560*((n+2)/3)
			_, logs = headless(t, bin, path, fmt.Sprintf("--window-size=1200,%d", height), "--screenshot="+shot)
			require.Empty(t, consoleLine.FindAllString(logs, -1), "console messages")
			data, err := os.ReadFile(shot)
			require.NoError(t, err)
			img, err := png.Decode(bytes.NewReader(data))
			require.NoError(t, err)
			checkScreenshot(t, img)
		})
	}
}

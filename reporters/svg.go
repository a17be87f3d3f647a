package reporters

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file holds the small SVG toolkit of the HTML page: scales, "nice"
// ticks, a chart frame with labelled axes, and the one escaping function
// every artifact string goes through.

// scale maps a data interval onto a pixel interval, linearly or (log) on
// log10 of the value.
type scale struct {
	lo, hi float64 // data domain, lo < hi (lo > 0 when log)
	p0, p1 float64 // pixels of lo and hi
	log    bool
}

// px is the pixel position of v; values outside the domain are clamped.
func (s scale) px(v float64) float64 {
	lo, hi := s.lo, s.hi
	if s.log {
		v, lo, hi = math.Log10(math.Max(v, s.lo)), math.Log10(lo), math.Log10(hi)
	}
	t := (v - lo) / (hi - lo)
	t = math.Max(0, math.Min(1, t))
	return s.p0 + t*(s.p1-s.p0)
}

// ticks returns the tick values of s: 1-2-5 steps for a linear scale,
// powers of ten (and 2 and 5 times them when few) for a log scale.
func (s scale) ticks() []float64 {
	if s.log {
		return logTicks(s.lo, s.hi)
	}
	return niceTicks(math.Min(s.lo, s.hi), math.Max(s.lo, s.hi), 5)
}

// tickFormat formats the ticks of s with as many decimals as their step
// needs, so close ticks never print alike.
func (s scale) tickFormat() func(float64) string {
	if s.log {
		return fmtNum
	}
	step := niceStep(math.Abs(s.hi-s.lo), 5)
	dec := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	return func(v float64) string { return strconv.FormatFloat(v, 'f', dec, 64) }
}

// niceStep is the 1, 2 or 5 times a power of ten closest above span/n.
func niceStep(span float64, n int) float64 {
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			return m * mag
		}
	}
	return 10 * mag
}

// niceTicks returns about n evenly spaced round values covering [lo, hi].
func niceTicks(lo, hi float64, n int) []float64 {
	step := niceStep(hi-lo, n)
	var ts []float64
	for v := math.Ceil(lo/step-1e-9) * step; v <= hi+step*1e-9; v += step {
		t := math.Round(v/step) * step
		if t == 0 {
			t = 0 // not -0
		}
		ts = append(ts, t)
	}
	return ts
}

// niceDomain widens [lo, hi] to tick boundaries; an empty or degenerate
// interval gets a margin around its value.
func niceDomain(lo, hi float64, zero bool) (float64, float64) {
	if zero {
		lo = math.Min(lo, 0)
	}
	if !(hi > lo) {
		pad := math.Max(math.Abs(hi)*0.1, 1)
		lo, hi = lo-pad, hi+pad
		if zero && lo < 0 && hi > pad {
			lo = 0
		}
	}
	step := niceStep(hi-lo, 5)
	return math.Floor(lo/step) * step, math.Ceil(hi/step) * step
}

// logDomain widens [lo, hi] (lo > 0) to powers of ten.
func logDomain(lo, hi float64) (float64, float64) {
	lo, hi = math.Max(lo, 1e-3), math.Max(hi, 1e-3)
	l, h := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if h <= l {
		h = l + 1
	}
	return math.Pow(10, l), math.Pow(10, h)
}

// logTicks returns the powers of ten in [lo, hi], with 2× and 5× between
// them when the domain spans at most two decades.
func logTicks(lo, hi float64) []float64 {
	var ts []float64
	decades := math.Log10(hi / lo)
	for p := math.Floor(math.Log10(lo)); p <= math.Ceil(math.Log10(hi)); p++ {
		for _, m := range []float64{1, 2, 5} {
			if m != 1 && decades > 2 {
				continue
			}
			v := m * math.Pow(10, p)
			if v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
				ts = append(ts, v)
			}
		}
	}
	return ts
}

// fmtNum formats a value for a label: no exponent, fewer decimals the
// larger it is, thousands with a k suffix above 10000.
func fmtNum(v float64) string {
	switch a := math.Abs(v); {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "-"
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', 2, 64) + "M"
	case a >= 1e4:
		return strconv.FormatFloat(math.Round(v/100)/10, 'f', -1, 64) + "k"
	case a >= 100:
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64)
	case a >= 10:
		return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
	case a >= 1:
		return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}

// px formats a pixel coordinate to a tenth of a pixel.
func px(v float64) string {
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}

// esc makes s safe as HTML/SVG text or a quoted attribute value. Invalid
// UTF-8 becomes U+FFFD; C0 and C1 control characters (terminal escape
// sequences among them) and the bidirectional-override characters, which
// could make text display as something else, are written as visible Go
// escapes (\x1b, \u202e); then <, >, &, ' and " become entities.
func esc(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case r < 0x20 && r != '\t' && r != '\n', r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r <= 0x9f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return html.EscapeString(b.String())
}

// seriesStyle is how one run is drawn: an Okabe–Ito colour, a dash
// pattern and a marker shape, so runs differ without colour too.
type seriesStyle struct {
	Color, Dash, Marker string
}

// okabeIto is the colour-blind-safe palette of Okabe and Ito (2008), in the
// order runs use it (the yellow, weak on white, is left out).
var okabeIto = [...]string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"}

// runDashes are the dash patterns of runs, in order ("" is solid).
var runDashes = [...]string{"", "7 3", "2 2", "9 3 2 3", "4 4", "1 3", "12 3 3 3"}

// runMarkers are the scatter marker shapes of runs, in order.
var runMarkers = [...]string{"circle", "square", "triangle", "diamond", "cross", "triangle-down", "plus"}

// styleOf is the style of run i (0-based). The first seven runs differ in
// colour, dash pattern and marker shape alike (so they differ without
// colour too); each later seven take the colours again with the patterns
// and shapes shifted by one more, so the first 49 runs each look
// different from every other (the colour with the dash on a line, with
// the marker in a scatter).
func styleOf(i int) seriesStyle {
	n := len(okabeIto)
	k := (i%n + i/n) % len(runDashes)
	return seriesStyle{okabeIto[i%n], runDashes[k], runMarkers[k]}
}

// marker writes the marker shape at (x, y) with radius r.
func marker(b *strings.Builder, shape string, x, y, r float64, fill string) {
	switch shape {
	case "square":
		fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"/>`, px(x-r), px(y-r), px(2*r), px(2*r), fill)
	case "triangle", "triangle-down", "diamond", "cross", "plus":
		var pts [][2]float64
		switch shape {
		case "triangle":
			pts = [][2]float64{{0, -1.2}, {1.1, 0.9}, {-1.1, 0.9}}
		case "triangle-down":
			pts = [][2]float64{{0, 1.2}, {1.1, -0.9}, {-1.1, -0.9}}
		case "diamond":
			pts = [][2]float64{{0, -1.3}, {1.3, 0}, {0, 1.3}, {-1.3, 0}}
		case "cross":
			pts = [][2]float64{{-1, -1}, {1, 1}, {0, 0}, {1, -1}, {-1, 1}, {0, 0}}
		case "plus":
			pts = [][2]float64{{-1.3, 0}, {1.3, 0}, {0, 0}, {0, -1.3}, {0, 1.3}, {0, 0}}
		}
		var d strings.Builder
		for i, p := range pts {
			fmt.Fprintf(&d, "%s%s %s", map[bool]string{true: "M", false: "L"}[i == 0], px(x+p[0]*r), px(y+p[1]*r))
		}
		if shape == "cross" || shape == "plus" {
			fmt.Fprintf(b, `<path d="%s" stroke="%s" stroke-width="1.5" fill="none"/>`, d.String(), fill)
			return
		}
		fmt.Fprintf(b, `<path d="%sZ" fill="%s"/>`, d.String(), fill)
	default:
		fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="%s" fill="%s"/>`, px(x), px(y), px(r), fill)
	}
}

// chart is one SVG chart being written: a frame of w×h pixels with a plot
// area inside margins, and the scales of its two axes.
type chart struct {
	b                        *strings.Builder
	w, h                     float64
	left, top, right, bottom float64 // plot area, in pixels
	x, y                     scale
}

// chartSpec says what a chart shows: its accessible title and description
// and its axes. xFmt and yFmt format tick labels (nil: fmtNum). H is the
// height of a chart with a one-line title and no legend: a longer title
// wraps onto more lines above the plot, the legend's rows go below the
// axis label, and the chart grows by them, the plot keeping its size.
type chartSpec struct {
	ID, Title, Desc string
	W, H            float64
	XLabel, YLabel  string
	X, Y            scale                // domains only; the pixel ranges are set by begin
	XFmt, YFmt      func(float64) string // nil: by the tick step
	Legend          []legendEntry        // one per run or line drawn; none: no legend
}

// legendEntry is one line of a chart's legend: a label and how its
// series is drawn, a line style or (Fill set) a colour swatch.
type legendEntry struct {
	Label string
	Style seriesStyle
	Fill  string
}

// Chart margins in pixels: room for tick labels and axis labels.
const (
	marginLeft   = 64
	marginRight  = 30
	marginTop    = 28
	marginBottom = 44
)

// Text metrics of the chart frame. The widths are generous estimates of
// the page's fonts (a browser's system-ui is narrower), so that a wrapped
// line never reaches past the chart's edge.
const (
	titleCharW  = 7.6 // px per rune of the 13px bold title
	titleLineH  = 16  // px between two lines of a wrapped title
	legendCharW = 6.6 // px per rune of an 11px legend label
	legendSwW   = 34  // px of an entry's line sample and the gap before its label
	legendGap   = 14  // px between two entries of a row
	legendRowH  = 18  // px per row of the legend
)

// wrapWords splits text into lines of at most width pixels at charW px a
// rune, breaking at spaces; a word longer than a line gets a line of its
// own.
func wrapWords(text string, width, charW float64) []string {
	limit := max(1, int(width/charW))
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		switch {
		case line == "":
			line = w
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) <= limit:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	return append(lines, line)
}

// legendSlot is where one legend entry is drawn: its left edge and row.
type legendSlot struct {
	x   float64
	row int
}

// layoutLegend places entries in a grid from left to right: columns as
// wide as the widest entry, as many as fit, and as many rows as the
// entries need, whatever their number.
func layoutLegend(entries []legendEntry, left, right float64) (slots []legendSlot, rows int) {
	if len(entries) == 0 {
		return nil, 0
	}
	colW := 0.0
	for _, e := range entries {
		colW = max(colW, legendEntryW(e.Label)+legendGap)
	}
	cols := max(1, int((right-left+legendGap)/colW))
	for k := range entries {
		slots = append(slots, legendSlot{left + colW*float64(k%cols), k / cols})
	}
	return slots, (len(entries) + cols - 1) / cols
}

// legendEntryW is the width of an entry with label.
func legendEntryW(label string) float64 {
	return legendSwW + legendCharW*float64(utf8.RuneCountInString(label))
}

// beginChart writes the opening of an SVG chart with its title, desc,
// grid, axes, ticks, axis labels and legend, and returns the chart to
// draw into.
func beginChart(b *strings.Builder, s chartSpec) *chart {
	titleLines := wrapWords(s.Title, s.W-marginLeft-marginRight+20, titleCharW)
	top := marginTop + titleLineH*float64(len(titleLines)-1)
	bottom := top + s.H - marginTop - marginBottom
	slots, rows := layoutLegend(s.Legend, marginLeft, s.W-marginRight)
	legendTop := bottom + marginBottom + 2
	h := legendTop - 2
	if rows > 0 {
		h = legendTop + legendRowH*float64(rows)
	}
	c := &chart{b: b, w: s.W, h: h, left: marginLeft, top: top,
		right: s.W - marginRight, bottom: bottom, x: s.X, y: s.Y}
	c.x.p0, c.x.p1 = c.left, c.right
	c.y.p0, c.y.p1 = c.bottom, c.top
	fmt.Fprintf(b, `<svg class="chart" id="%s" role="img" aria-labelledby="%s-t %s-d" aria-label="%s" viewBox="0 0 %s %s" width="%s" height="%s">`,
		esc(s.ID), esc(s.ID), esc(s.ID), esc(s.Title), px(s.W), px(h), px(s.W), px(h))
	fmt.Fprintf(b, `<title id="%s-t">%s</title><desc id="%s-d">%s</desc>`, esc(s.ID), esc(s.Title), esc(s.ID), esc(s.Desc))
	fmt.Fprintf(b, `<text class="ctitle" x="%s" y="16">`, px(c.left))
	for i, l := range titleLines {
		dy := "0"
		if i > 0 {
			dy = strconv.Itoa(titleLineH)
		}
		fmt.Fprintf(b, `<tspan x="%s" dy="%s">%s</tspan>`, px(c.left), dy, esc(l))
	}
	b.WriteString(`</text>`)
	xf, yf := s.XFmt, s.YFmt
	if xf == nil {
		xf = c.x.tickFormat()
	}
	if yf == nil {
		yf = c.y.tickFormat()
	}
	b.WriteString(`<g class="axes">`)
	for _, t := range c.x.ticks() {
		x := c.x.px(t)
		fmt.Fprintf(b, `<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s"/><text class="tick" x="%s" y="%s" text-anchor="middle">%s</text>`,
			px(x), px(c.top), px(x), px(c.bottom), px(x), px(c.bottom+14), esc(xf(t)))
	}
	for _, t := range c.y.ticks() {
		y := c.y.px(t)
		fmt.Fprintf(b, `<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s"/><text class="tick" x="%s" y="%s" text-anchor="end">%s</text>`,
			px(c.left), px(y), px(c.right), px(y), px(c.left-5), px(y+4), esc(yf(t)))
	}
	fmt.Fprintf(b, `<path class="axis" d="M%s %sV%sH%s"/>`, px(c.left), px(c.top), px(c.bottom), px(c.right))
	fmt.Fprintf(b, `<text class="label" x="%s" y="%s" text-anchor="middle">%s</text>`,
		px((c.left+c.right)/2), px(c.bottom+marginBottom-8), esc(s.XLabel))
	fmt.Fprintf(b, `<text class="label" transform="translate(14 %s) rotate(-90)" text-anchor="middle">%s</text>`,
		px((c.top+c.bottom)/2), esc(s.YLabel))
	b.WriteString(`</g>`)
	for i, e := range s.Legend {
		x, y := slots[i].x, legendTop+legendRowH*float64(slots[i].row)+legendRowH/2
		if st := e.Style; e.Fill == "" {
			fmt.Fprintf(b, `<g class="legend"><line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2.5" stroke-dasharray="%s"/>`,
				px(x), px(y), px(x+22), px(y), st.Color, st.Dash)
			marker(b, st.Marker, x+11, y, 3.5, st.Color)
		} else {
			fmt.Fprintf(b, `<g class="legend"><rect x="%s" y="%s" width="22" height="10" fill="%s"/>`, px(x), px(y-5), e.Fill)
		}
		fmt.Fprintf(b, `<text class="tick" x="%s" y="%s">%s</text></g>`, px(x+26), px(y+4), esc(e.Label))
	}
	return c
}

// end closes the chart.
func (c *chart) end() { c.b.WriteString(`</svg>`) }

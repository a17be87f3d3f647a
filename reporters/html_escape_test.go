package reporters

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// hostile is server-provided text that tries everything: closing the
// title and opening a script, breaking out of an attribute, an SVG
// handler, a CDATA end and a comment, a terminal colour sequence, NUL,
// DEL, a C1 control, a bidirectional override and invalid UTF-8.
const hostile = "</title></svg><script>alert(1)</script>\" onload=\"alert(2)\" ' <img src=http://127.0.0.1/x> ]]> <!-- \x1b[31mred\x1b[0m \x00 \x7f \u0085 \u202egnp.exe \xff\xfe end"

func hostileRun(t *testing.T) *artifact.Report {
	r := syntheticRun(t, 30, 2, 9)
	r.Model, r.Engine, r.RunID = hostile, new(hostile), hostile
	r.Failures[0].ErrorMessage = hostile
	r.Failures[0].ErrorType = hostile
	r.Failures[0].FailureClass = artifact.FailureClass(hostile)
	return r
}

func TestWriteHTMLEscapesHostileText(t *testing.T) {
	page := renderHTML(t, hostileRun(t))
	s := string(page)
	require.NotContains(t, s, "<script")
	require.NotContains(t, s, "<img")
	require.NotContains(t, s, `" onload="`)
	require.NotContains(t, s, "]]>")
	require.NotContains(t, s, "<!--")
	for i := 0; i < len(page); i++ {
		if c := page[i]; c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			t.Fatalf("raw control byte %#x at %d: %q", c, i, page[max(0, i-40):min(len(page), i+40)])
		}
	}
	require.True(t, strings.ToValidUTF8(s, "?") == s, "the page is valid UTF-8")
	require.NotContains(t, s, "\u202e", "no raw bidi override")
	require.NotContains(t, s, "\u0085", "no raw C1 control")
	// The text is shown, visibly escaped, in the timeline hover title and
	// the failure table.
	want := `&lt;/title&gt;&lt;/svg&gt;&lt;script&gt;alert(1)&lt;/script&gt;&#34; onload=&#34;alert(2)&#34; &#39;`
	require.GreaterOrEqual(t, strings.Count(s, want), 3)
	require.Contains(t, s, `\x1b[31mred\x1b[0m \x00 \x7f \u0085 \u202egnp.exe `+"\ufffd\ufffd end")
	// Every chart is still well-formed with its one title first.
	charts := parseCharts(t, page)
	require.Len(t, charts, 6)
	for _, c := range charts {
		require.Equal(t, "title", c.first, c.id)
	}
}

// TestWriteHTMLFetchesNothing: the page declares the strict policy and
// names no URL to load: no src or href, no CSS url() or @import.
func TestWriteHTMLFetchesNothing(t *testing.T) {
	for _, page := range [][]byte{
		renderHTML(t, loadReport(t, seedPath)),
		renderHTML(t, hostileRun(t)),
	} {
		require.Contains(t, string(page), `<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; style-src &#39;unsafe-inline&#39;; img-src data:"/>`)
		// Inside a tag (escaped text has no raw <), no attribute loads anything.
		require.Empty(t, regexp.MustCompile(`(?i)<[^>]*\s(src|href|xlink:href|action|srcset|poster|data)\s*=`).FindAll(page, -1))
		require.Empty(t, regexp.MustCompile(`(?i)url\(|@import|<script|<link|<iframe|<object|<embed|<image|<use`).FindAll(page, -1))
		require.NotContains(t, string(page), `="http`)
	}
}

func TestWriteHTMLErrors(t *testing.T) {
	var buf bytes.Buffer
	require.ErrorContains(t, WriteHTML(&buf), "no runs")
	require.ErrorContains(t, WriteHTML(&buf, loadReport(t, seedPath), nil), "run 2: nil report")
}

// FuzzEsc: whatever the input, escaped text has no markup character, no
// raw control byte and is valid UTF-8.
func FuzzEsc(f *testing.F) {
	f.Add(hostile)
	f.Add("plain")
	f.Fuzz(func(t *testing.T, s string) {
		out := esc(s)
		if strings.ContainsAny(out, "<>\"'") {
			t.Fatalf("markup character in %q", out)
		}
		for _, r := range out {
			if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
				t.Fatalf("raw control %U in %q", r, out)
			}
		}
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 %q", out)
		}
	})
}

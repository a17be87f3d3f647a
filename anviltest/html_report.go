package anviltest

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/reporters"
)

// envHTML set to 1 (or any true value of strconv.ParseBool) also writes
// htmlReportName beside the artifacts; withHTML wins over it.
const envHTML = "ANVIL_HTML"

// htmlReportName is the page Capacity writes into the artifact directory
// when the HTML report is on: reporters.WriteHTML of every artifact of the
// directory written by the current test binary, so the runs of one go test
// are overlaid on one page.
const htmlReportName = "report.html"

// withHTML turns the HTML report (htmlReportName beside the artifacts) on
// or off; by default ANVIL_HTML decides, and it is off.
func withHTML(on bool) Option {
	return func(s *settings) { s.html = &on }
}

// htmlWanted reports whether the HTML report is written: withHTML, else
// ANVIL_HTML, else off.
func (s *settings) htmlWanted() (bool, error) {
	if s.html != nil {
		return *s.html, nil
	}
	e, err := s.env()
	if err != nil || e.html == nil {
		return false, err
	}
	return *e.html, nil
}

// writeHTMLReport rewrites dir/htmlReportName from the artifacts of dir
// whose run started at or after since (the test binary's start), in the
// order they started. It is written atomically (artifact.WriteFile):
// a failure leaves the previous page, or none.
func writeHTMLReport(dir string, since time.Time) (string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return "", err
	}
	var runs []*artifact.Report
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return "", err
		}
		r, err := artifact.Read(f)
		f.Close()
		if err != nil {
			continue // not a capacity artifact (conformance verdicts, say)
		}
		if r.StartedAtUnixNS >= since.UnixNano() {
			runs = append(runs, r)
		}
	}
	if len(runs) == 0 {
		return "", fmt.Errorf("no artifact of this run in %s", dir)
	}
	slices.SortStableFunc(runs, func(a, b *artifact.Report) int { return cmp.Compare(a.StartedAtUnixNS, b.StartedAtUnixNS) })
	out := filepath.Join(dir, htmlReportName)
	if err := artifact.WriteFile(out, func(w io.Writer) error { return reporters.WriteHTML(w, runs...) }); err != nil {
		return "", err
	}
	return out, nil
}

// processStart is when this test binary started (set once, at package
// initialization, and never changed): the HTML report covers the runs that
// started after it, not those of earlier go test invocations that left
// their artifacts in the same directory.
var processStart = time.Now()

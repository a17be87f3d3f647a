package reporters

import (
	"bytes"
	"cmp"
	"context"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// browserTimeout bounds one headless browser run; it is a deadline for a
// stuck browser, not a measurement.
const browserTimeout = 2 * time.Minute

// chromium returns the path of a Chromium binary, or skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium binary on PATH: the browser test needs one (.ci/install-chromium.sh installs Debian's chromium)")
	return ""
}

// headless runs the browser on the page file with args and returns its
// standard output and standard error. The profile lives in a temporary
// directory; console messages go to standard error.
func headless(t *testing.T, bin, page string, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), browserTimeout)
	defer cancel()
	base := []string{"--headless=new", "--disable-gpu", "--no-sandbox", "--hide-scrollbars",
		"--no-first-run", "--no-default-browser-check", "--disable-extensions",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}
	cmd := exec.CommandContext(ctx, bin, append(append(base, args...), "file://"+page)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Run(), "chromium: %s", errb.String())
	return out.String(), errb.String()
}

// consoleLine matches a page console message in Chromium's log: the page
// has no script, so any is a blocked load or an error.
var consoleLine = regexp.MustCompile(`(?m)^.*:CONSOLE[:(].*$`)

// TestBrowserRendersReport opens the seed report and a two-run report with
// failures in headless Chromium and checks the DOM it parsed, that nothing
// was logged to the console (a load the policy blocked, a script error),
// and that the screenshot shows charts. With -update it writes the seed
// report's screenshot to testdata/html/report.png and an open loop's
// (requests drawn from when they were due, their queue wait first) to
// testdata/html/openloop.png, and a saturated open loop's with the
// server's queue under its requests to testdata/html/saturated.png.
func TestBrowserRendersReport(t *testing.T) {
	bin := chromium(t)
	for _, tc := range []struct {
		name string
		page []byte
		png  string // golden screenshot path with -update, or ""
		// height is the window's height in pixels ("": 2000).
		height string
	}{
		{"seed", renderHTML(t, loadReport(t, seedPath)), "testdata/html/report.png", ""},
		{"two-runs", renderHTML(t, loadReport(t, seedPath), syntheticRun(t, 200, 8, 1)), "", ""},
		{"open-loop", renderHTML(t, syntheticOpenLoop(t, 60, 4, 20)), "testdata/html/openloop.png", ""},
		{"traffic", renderHTML(t, replayRun(t), sessionsRun(t)), "", ""},
		{"saturated", renderHTML(t, loadReport(t, saturatedPath)), "testdata/html/saturated.png", "2600"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			page := filepath.Join(dir, "report.html")
			require.NoError(t, os.WriteFile(page, tc.page, 0o644))
			wantCharts := len(chartRE.FindAll(tc.page, -1))
			require.Positive(t, wantCharts)

			dom, logs := headless(t, bin, page, "--dump-dom")
			require.Equal(t, wantCharts, strings.Count(dom, `<svg class="chart"`), "charts in the parsed DOM")
			require.Contains(t, dom, `<table>`)
			require.Empty(t, consoleLine.FindAllString(logs, -1), "console messages")

			shot := filepath.Join(dir, "shot.png")
			_, logs = headless(t, bin, page, "--window-size=1200,"+cmp.Or(tc.height, "2000"), "--screenshot="+shot)
			require.Empty(t, consoleLine.FindAllString(logs, -1), "console messages")
			data, err := os.ReadFile(shot)
			require.NoError(t, err)
			img, err := png.Decode(bytes.NewReader(data))
			require.NoError(t, err)
			checkScreenshot(t, img)
			if *update && tc.png != "" {
				require.NoError(t, os.WriteFile(tc.png, data, 0o644))
			}
		})
	}
}

// TestBrowserLogsBlockedLoads shows that the console check can fail: a
// page under the same policy that tries to load an image from the network
// and run a script gets both blocked, and Chromium logs each.
func TestBrowserLogsBlockedLoads(t *testing.T) {
	bin := chromium(t)
	page := filepath.Join(t.TempDir(), "bad.html")
	bad := `<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="` + contentSecurityPolicy +
		`"/></head><body><img src="http://127.0.0.1:9/x.png"/><script>boom()</script></body></html>`
	require.NoError(t, os.WriteFile(page, []byte(bad), 0o644))
	_, logs := headless(t, bin, page, "--dump-dom")
	require.Len(t, consoleLine.FindAllString(logs, -1), 2, logs)
}

// checkScreenshot requires a picture that is not blank: enough non-white
// pixels, many distinct colours, and the first run's Okabe–Ito blue.
func checkScreenshot(t *testing.T, img image.Image) {
	t.Helper()
	b := img.Bounds()
	colours := map[color.RGBA]int{}
	nonWhite := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			c := color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), 255}
			colours[c]++
			if c.R < 240 || c.G < 240 || c.B < 240 {
				nonWhite++
			}
		}
	}
	share := float64(nonWhite) / float64(b.Dx()*b.Dy())
	t.Logf("screenshot %dx%d: %d colours, %.1f%% non-white", b.Dx(), b.Dy(), len(colours), 100*share)
	require.Greater(t, share, 0.03, "share of non-white pixels")
	require.Greater(t, len(colours), 64, "distinct colours")
	require.Greater(t, colours[color.RGBA{0x00, 0x72, 0xB2, 255}], 200, "pixels of the first run's colour")
}

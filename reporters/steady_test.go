package reporters

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// steadyRun is a closed loop of 800 requests whose steady window, 6 s to
// 42 s of 75 s, holds twice the whole run's throughput.
func steadyRun() *artifact.Report {
	r := &artifact.Report{Requests: 800, Completed: 800, WallClockMS: 75312.5, PerformanceEligible: true,
		Metrics: artifact.Metrics{ThroughputTokS: new(1062.24), ThroughputPerformanceEligible: true,
			TTFT: artifact.Distribution{P50: new(52.3), P95: new(402.0)}, E2E: artifact.Distribution{P50: new(401.5)}}}
	r.Extension().Steady = &artifact.Steady{Found: true, BinMS: 1000, Bins: 75, Load: "in_flight",
		Target: new(8.0), Achieved: new(7.99), StartMS: new(6000.0), EndMS: new(42000.0),
		CompletionsZ: new(0.508), TTFTZ: new(1.675),
		Requests: new(716), Succeeded: new(716), TTFTP50MS: new(50.1), TTFTP95MS: new(59.2),
		E2EP50MS: new(400.2), OutputTokS: new(1998.08), CompletionsPerS: new(19.98)}
	return r
}

// TestWriteSummarySteady: the summary gives the window, its load and its
// trend statistics, then its headline metrics beside the whole run's; a
// run without one says why.
func TestWriteSummarySteady(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, WriteSummary(&buf, steadyRun()))
	out := buf.String()
	section := out[strings.Index(out, "steady window"):]
	end := strings.Index(section, "req/s")
	section = section[:end+strings.Index(section[end:], "\n")+1]
	want := `steady window 6.0 .. 42.0 s of 75.3 (bins of 1000 ms; 7.99 in flight of 8.00; Mann-Kendall z completions 0.508, TTFT 1.68)
       metric   unit  window  whole run
     requests            716        800
     TTFT p50     ms    50.1       52.3
     TTFT p95     ms    59.2        402
     TTFO p50     ms       -          -
     TPOT p50     ms       -          -
      E2E p50     ms     400        402
   decode p50  tok/s       -          -
  prefill p50  tok/s       -          -
       output  tok/s    1998       1062
  completions  req/s    20.0       10.6
`
	require.Equal(t, want, section)
	require.Contains(t, strings.Join(RunLog(steadyRun()), "\n"),
		"steady window 6.0 .. 42.0 s of 75.3 (bins of 1000 ms; 7.99 in flight of 8.00; Mann-Kendall z completions 0.508, TTFT 1.68): output 1998 tok/s (whole run 1062), TTFT p50 50.1 ms (52.3)")

	warm := steadyRun()
	warm.AnvilGo.Run = &artifact.RunSummary{Warmup: new("steady"), WarmupRequests: new(57), WarmupMS: new(6240.0), WarmupSteady: new(true)}
	require.Contains(t, RunLog(warm), "warm-up until steady: 57 requests in 6.2 s, steady")
	warm.AnvilGo.Run.WarmupSteady = new(false)
	buf.Reset()
	require.NoError(t, WriteSummary(&buf, warm))
	require.Contains(t, buf.String(), "\nwarm-up until steady: 57 requests in 6.2 s, never steady (stopped at its limit)\nsteady window")
	warm.AnvilGo.Run = &artifact.RunSummary{Warmup: new("time"), WarmupRequests: new(16), WarmupMS: new(1000.0)}
	require.Contains(t, RunLog(warm), "warm-up by time: 16 requests in 1.0 s")

	none := steadyRun()
	none.AnvilGo.Steady = &artifact.Steady{Load: "in_flight", BinMS: 133.3, Bins: 7,
		Reason: new("too short: the phase holds 7 bins of 133.3 ms (4 completions each on average at least), the test needs 10")}
	buf.Reset()
	require.NoError(t, WriteSummary(&buf, none))
	require.Contains(t, buf.String(), "\nno steady window: too short: the phase holds 7 bins of 133.3 ms (4 completions each on average at least), the test needs 10\n")
	require.NotContains(t, buf.String(), "whole run")
	require.Contains(t, RunLog(none), "no steady window: too short: the phase holds 7 bins of 133.3 ms (4 completions each on average at least), the test needs 10")
}

// TestWriteHTMLSteady: the page names the window in the run's header and
// shades it on the timeline, on the run's own time axis.
func TestWriteHTMLSteady(t *testing.T) {
	r := syntheticRun(t, 40, 4, 3)
	x := r.Extension()
	for _, row := range r.RequestTimings {
		at := float64(row.RequestIndex/4) * 100
		x.Requests = append(x.Requests, artifact.RequestDetail{RequestIndex: row.RequestIndex, Outcome: artifact.OutcomeSuccess,
			SentMS: new(at), EndMS: new(at + row.E2EMS), FirstOutputMS: new(at + row.TimeToFirstOutputMS), FirstContentMS: new(at + row.TTFTMS)})
	}
	for _, f := range r.Failures {
		at := float64(f.RequestIndex/4) * 100
		x.Requests = append(x.Requests, artifact.RequestDetail{RequestIndex: f.RequestIndex, Outcome: string(f.FailureClass),
			SentMS: new(at), EndMS: new(at + f.ElapsedMS)})
	}
	slices.SortFunc(x.Requests, func(a, b artifact.RequestDetail) int { return a.RequestIndex - b.RequestIndex })
	x.Steady = &artifact.Steady{Found: true, BinMS: 100, Bins: 16, Load: "in_flight", Target: new(4.0), Achieved: new(3.9),
		StartMS: new(300.0), EndMS: new(900.0), CompletionsZ: new(0.1), TTFTZ: new(-0.2), Requests: new(24)}
	page := string(renderHTML(t, r))
	require.Contains(t, page, `<dt>steady state</dt><dd class="good">steady window 0.3 .. 0.9 s of 1.6 (bins of 100 ms; 3.90 in flight of 4.00; Mann-Kendall z completions 0.100, TTFT -0.200)</dd>`)
	require.Regexp(t, `<rect class="steady" x="[0-9.]+" y="[0-9.]+" width="[0-9.]+" height="[0-9.]+" fill="#009E73" fill-opacity="0.12"><title>steady window 300 to 900 ms</title></rect>`, page)
	require.Contains(t, page, "The green band is the steady-state window, 300 to 900 ms.")
	parseCharts(t, []byte(page)) // still well formed

	x.Steady = &artifact.Steady{Load: "in_flight", Reason: new("too short: the phase holds 7 bins")}
	page = string(renderHTML(t, r))
	require.Contains(t, page, `<dt>steady state</dt><dd class="bad">no steady window: too short: the phase holds 7 bins</dd>`)
	require.NotContains(t, page, `class="steady"`)
}

// TestProbeLine: the summary, the benchmark log and the HTML header give
// the probe requests' outcomes and latency.
func TestProbeLine(t *testing.T) {
	r := steadyRun()
	r.AnvilGo.ProbeRequests = &artifact.ProbeRequests{RateRPS: 2, MaxTokens: 1, Sent: 11, Succeeded: 10, Cancelled: 1,
		TTFOMS: &artifact.Quantiles{P50: 11.8, P90: 30.2, P99: 54, Max: 96}, E2EMS: &artifact.Quantiles{P50: 12.5, P90: 31, P99: 55, Max: 97}}
	want := "probe requests: 11 sent at 2/s beside the load (max_tokens 1), 10 succeeded, 0 failed, 1 cancelled at the end; TTFO p50 11.8  p90 30.2  p99 54.0  max 96.0 ms; E2E p50 12.5 ms"
	require.Contains(t, RunLog(r), want)
	var buf bytes.Buffer
	require.NoError(t, WriteSummary(&buf, r))
	require.Contains(t, buf.String(), "\n"+want+"\n")
	r.AnvilGo.ProbeRequests.Failed, r.AnvilGo.ProbeRequests.FirstError = 1, new("http_error: HTTP 503")
	require.Contains(t, probeLine(r), "1 failed, 1 cancelled at the end; TTFO p50 11.8")
	require.True(t, strings.HasSuffix(probeLine(r), "; first failure: http_error: HTTP 503"))
	page := renderHTML(t, withProbes(syntheticRun(t, 20, 2, 5), r.AnvilGo.ProbeRequests))
	require.Contains(t, string(page), "<dt>probe requests</dt><dd>probe requests: 11 sent at 2/s")
	r.AnvilGo.ProbeRequests = nil
	require.Empty(t, probeLine(r))
}

// withProbes is r with p as its anvil_go.probe_requests.
func withProbes(r *artifact.Report, p *artifact.ProbeRequests) *artifact.Report {
	r.Extension().ProbeRequests = p
	return r
}

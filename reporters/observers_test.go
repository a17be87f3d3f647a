package reporters

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// observed is the seed with a self-audit of verdict and server metrics
// whose cross-checks are those of a run against the fake.
func observed(t *testing.T, verdict string, reasons ...string) *artifact.Report {
	r := loadReport(t, seedPath)
	if r.AnvilGo == nil {
		r.AnvilGo = &artifact.Extension{Version: 1}
	}
	p99, share := 4.1, 0.5
	r.AnvilGo.Audit = &artifact.Audit{Verdict: verdict, Reasons: append([]string{}, reasons...), SchedLatencyP99MS: &p99, CPUShare: &share, GOMAXPROCS: 2}
	r.AnvilGo.ServerMetrics = &artifact.ServerMetrics{Endpoint: "http://gpu-box:8000/metrics", Engine: new("vllm"), IntervalMS: 1000, Samples: 12,
		Checks: &artifact.ServerChecks{
			GenerationTokens: &artifact.TokenCheck{Counter: "vllm:generation_tokens_total", ServerIncrease: 768, ClientTokens: 768, Verdict: "exact"},
			TTFT:             &artifact.TTFTCheck{Histogram: "vllm:time_to_first_token_seconds", ServerRequests: 48, ServerMeanMS: 140, ClientMeanMS: 142.5, NetworkAndClientMS: 2.5},
		}}
	return r
}

// TestBenchfmtAuditNote: a suspect run and clean ones written into one
// file share their configuration, so benchstat keeps them in one table
// (a key would split it); the suspect one is followed by a note that
// benchfmt readers skip, naming the benchmark, the reasons and what to do.
func TestBenchfmtAuditNote(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, writeBenchfmt(&buf, observed(t, "ok"),
		observed(t, "suspect", "scheduler latency p99 4.1 ms"), loadReport(t, seedPath)))
	rd := benchfmt.NewReader(bytes.NewReader(buf.Bytes()), "x.bench")
	var configs []map[string]string
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.Result:
			configs = append(configs, benchConfigMap(rec))
		case *benchfmt.SyntaxError:
			t.Fatal(rec)
		}
	}
	require.NoError(t, rd.Err())
	require.Len(t, configs, 3)
	require.Equal(t, configs[0], configs[1], "suspect or not, one identity")
	require.Equal(t, configs[0], configs[2])
	require.NotContains(t, configs[0], "audit")
	lines := strings.Split(buf.String(), "\n")
	var notes []int
	for i, l := range lines {
		if strings.HasPrefix(l, "#") {
			notes = append(notes, i)
		}
	}
	require.Len(t, notes, 1, "only the suspect run has a note:\n%s", buf.String())
	require.True(t, strings.HasPrefix(lines[notes[0]-1], "BenchmarkCapacity/ctx=65536/conc=1 6 "), "the note follows its result")
	require.Equal(t, "# BenchmarkCapacity/ctx=65536/conc=1: client audit SUSPECT: scheduler latency p99 4.1 ms; "+auditAdvice, lines[notes[0]])
	require.Contains(t, auditAdvice, "go test -p 1")
	require.Contains(t, auditAdvice, "GOMAXPROCS")
}

// TestSummaryAuditAndCrossChecks: the summary prints the verdict with its
// reasons and both cross-checks with the TTFT difference.
func TestSummaryAuditAndCrossChecks(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, WriteSummary(&buf, observed(t, "suspect", "scheduler latency p99 4.1 ms: timings below ~4 ms resolution are not trustworthy")))
	out := buf.String()
	require.Contains(t, out, "client audit SUSPECT: scheduler latency p99 4.1 ms: timings below ~4 ms resolution are not trustworthy; "+auditAdvice+"\n")
	require.Contains(t, out, "server metrics http://gpu-box:8000/metrics (vllm): 12 samples every 1000 ms, 0 failed\n")
	require.Contains(t, out, "server tokens vllm:generation_tokens_total +768 vs usage 768: difference 0 (allowance 0): exact\n")
	require.Contains(t, out, "server TTFT mean 140 ms (48 requests) vs client 142 ms: network + client 2.50 ms\n")

	buf.Reset()
	require.NoError(t, WriteSummary(&buf, observed(t, "ok")))
	require.Contains(t, buf.String(), "client audit ok (scheduler latency p99 4.10 ms, max - ms; wake-ups late by - ms at the median; 0 GC pauses, max - ms; CPU 50% of 2 cores)\n")
	require.False(t, strings.Contains(buf.String(), "SUSPECT"))
}

// TestHTMLHeaderAudit: the HTML header shows the audit, a suspect one
// marked bad with its reasons.
func TestHTMLHeaderAudit(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, WriteHTML(&buf, observed(t, "suspect", "scheduler latency p99 4.1 ms")))
	require.Contains(t, buf.String(), `<dt>client audit</dt><dd class="bad">client audit SUSPECT: scheduler latency p99 4.1 ms; `+esc(auditAdvice)+`</dd>`)
	buf.Reset()
	require.NoError(t, WriteHTML(&buf, observed(t, "ok")))
	require.Contains(t, buf.String(), `<dt>client audit</dt><dd class="good">client audit ok (`)
}

// saturatedPath is a saturated open loop against the fake (testdata/README.md).
const saturatedPath = "testdata/saturated.json"

// TestHTMLServerTimeline: the saturated run's report draws the server's
// running and waiting requests and its KV-cache use on the requests' time
// axis: running holds at the fake's 4 slots while waiting climbs to 40,
// the queue the late requests' TTFT waits in.
func TestHTMLServerTimeline(t *testing.T) {
	r := loadReport(t, saturatedPath)
	v := serverViewOf(r.AnvilGo.ServerMetrics, nil)
	require.NotNil(t, v)
	require.Equal(t, 4.0, gaugeMax(v.Running))
	require.Equal(t, 40.0, gaugeMax(v.Waiting))
	require.Equal(t, "vllm:kv_cache_usage_perc", v.KV.Name)
	page := string(renderHTML(t, r))
	require.Contains(t, page, `id="timeline-1-queue"`)
	require.Contains(t, page, `id="timeline-1-kv"`)
	require.Contains(t, page, "<title>waiting (vllm:num_requests_waiting): ")
	require.Contains(t, page, ", max 40</title>")

	// Without server metrics, no server chart.
	r.AnvilGo.ServerMetrics = nil
	require.NotContains(t, string(renderHTML(t, r)), `id="timeline-1-queue"`)
}

// TestSweepServerPanels: an SLO search whose probes carry server metrics
// gains the per-probe panels of the server's waiting and running requests
// and KV-cache use; one without has none.
func TestSweepServerPanels(t *testing.T) {
	views := sweepViews(t)
	var buf bytes.Buffer
	require.NoError(t, writePage(&buf, views))
	require.NotContains(t, buf.String(), `id="sweep-concurrency-server-queue"`)

	for k := range views {
		w := float64(4 * k) // the queue grows with the probed concurrency
		views[k].Server = &serverView{
			Running: &gaugeView{Name: "vllm:num_requests_running", At: []float64{0, 1000}, Vals: []float64{1, 4}},
			Waiting: &gaugeView{Name: "vllm:num_requests_waiting", At: []float64{0, 1000}, Vals: []float64{0, w}},
			KV:      &gaugeView{Name: "vllm:kv_cache_usage_perc", At: []float64{0, 1000}, Vals: []float64{0, 0.2 * float64(k)}},
		}
	}
	buf.Reset()
	require.NoError(t, writePage(&buf, views))
	byID := map[string]chartStructure{}
	for _, c := range parseCharts(t, buf.Bytes()) {
		byID[c.id] = c
	}
	require.Equal(t, []string{"waiting", "running"}, byID["sweep-concurrency-server-queue"].series)
	require.Equal(t, []string{"KV-cache use"}, byID["sweep-concurrency-server-kv"].series)
}

package reporters

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
)

// TestRunLogMetricsFailureReason: the server-metrics line of the log
// quotes why the samples failed (issue 22), without the endpoint the line
// already names, cut short and made printable; a run without failures
// says nothing more.
func TestRunLogMetricsFailureReason(t *testing.T) {
	for _, tc := range []struct {
		name, last string
		failed     int
		want       string
	}{
		{"status", "GET http://gpu-box:8000/metrics: status 503", 6,
			"server metrics http://gpu-box:8000/metrics (vllm): 12 samples every 1000 ms, 6 failed (last: status 503)"},
		{"long, cut on a character", "GET http://gpu-box:8000/metrics: " + strings.Repeat("é", 100) + "\n", 1,
			"server metrics http://gpu-box:8000/metrics (vllm): 12 samples every 1000 ms, 1 failed (last: " + strings.Repeat("é", 80) + "…)"},
		{"another endpoint's text is kept", "servermetrics: the body is not the Prometheus text format: line 1\tbad", 2,
			`server metrics http://gpu-box:8000/metrics (vllm): 12 samples every 1000 ms, 2 failed (last: servermetrics: the body is not the Prometheus text format: line 1\x09bad)`},
		{"no failure", "", 0,
			"server metrics http://gpu-box:8000/metrics (vllm): 12 samples every 1000 ms, 0 failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := observed(t, "ok")
			r.AnvilGo.ServerMetrics.Failed = tc.failed
			if tc.last != "" {
				r.AnvilGo.ServerMetrics.LastError = &tc.last
			}
			require.Contains(t, RunLog(r), tc.want)
		})
	}
}

// TestRunLogMetricsFailureFromServer: a metrics endpoint that answers the
// discovery and then refuses every sample; the run's log line gives the
// status, and the credentials of the metrics URL appear nowhere in it.
func TestRunLogMetricsFailureFromServer(t *testing.T) {
	var metricsCalls atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		if metricsCalls.Add(1) > 1 {
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=\"0\"} 0\n")
	})
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"},"finish_reason":null}]}`+"\n\n"+
			`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`+"\n\n"+
			`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":400,"completion_tokens":1,"total_tokens":401}}`+"\n\n"+
			"data: [DONE]\n\n")
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	metricsURL := strings.Replace(srv.URL, "http://", "http://scraper:s3cret-pw@", 1) + "/metrics"
	rep, err := capacity.Run(t.Context(), capacity.Target{BaseURL: srv.URL + "/v1", Model: "m", MaxModelLen: 8192, MetricsURL: metricsURL},
		capacity.Workload{Requests: 2, Concurrency: 1, ContextTokens: 512})
	require.NoError(t, err)
	m := rep.AnvilGo.ServerMetrics
	require.NotNil(t, m)
	require.Positive(t, m.Failed)
	// The recorded endpoint drops the userinfo.
	want := fmt.Sprintf("server metrics %s/metrics (vllm): 0 samples every 1000 ms, %d failed (last: status 503)", srv.URL, m.Failed)
	log := strings.Join(RunLog(rep), "\n")
	require.Contains(t, log, want)
	require.NotContains(t, log, "s3cret-pw")
	require.NotContains(t, log, "scraper")
}

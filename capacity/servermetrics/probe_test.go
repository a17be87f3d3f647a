package servermetrics

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestProbe: against plain servers serving the real captures with their
// engines' Content-Type, a 404, an HTML page and an oversized body.
func TestProbe(t *testing.T) {
	llama := readCapture(t, "llamacpp-b10573-metrics.txt")
	sglang := readCapture(t, "sglang-unknown-metrics-docs-example-from-sgl-project-sglang.txt")
	mux := http.NewServeMux()
	serve := func(path, ct string, body []byte) {
		mux.HandleFunc(path, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", ct)
			_, _ = w.Write(body)
		})
	}
	serve("/llama/metrics", "text/plain; version=0.0.4", llama)
	serve("/sglang/metrics", "text/plain; version=0.0.4; charset=utf-8", sglang)
	serve("/html/metrics", "text/html", []byte("<html><body>dashboard</body></html>"))
	serve("/big/metrics", "text/plain", []byte(strings.Repeat("# comment\n", maxBodyBytes/10+1)))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	probe := func(path string) ProbeResult {
		r, err := Probe(t.Context(), Config{URL: srv.URL + path, Interval: 10 * time.Second})
		require.NoError(t, err)
		return r
	}
	r := probe("/llama/metrics")
	require.True(t, r.Answered && r.Text)
	require.Equal(t, string(engineLlamaCpp), r.Engine)
	require.Equal(t, 15, r.Families)
	require.Equal(t, []string{"llamacpp:n_busy_slots_per_decode", "llamacpp:n_decode_total", "llamacpp:prompt_seconds_total",
		"llamacpp:prompt_tokens_cached_total", "llamacpp:prompt_tokens_total", "llamacpp:requests_deferred",
		"llamacpp:requests_processing", "llamacpp:tokens_predicted_seconds_total", "llamacpp:tokens_predicted_total"}, r.Curated)
	require.Equal(t, []string{"llamacpp:spec_decode_num_accepted_tokens_total", "llamacpp:spec_decode_num_draft_tokens_total",
		"llamacpp:spec_decode_num_drafts_total"}, r.Optional, "b10573 serves speculation's counters, zero without a draft model")
	require.Empty(t, r.Missing, "the curated set is what b10573 serves (it has no KV-cache gauge)")

	r = probe("/sglang/metrics")
	require.True(t, r.Answered && r.Text)
	require.Equal(t, string(engineSGLang), r.Engine)
	require.Len(t, r.Curated, 8)
	require.Empty(t, r.Missing)

	r = probe("/none/metrics")
	require.False(t, r.Answered)
	require.False(t, r.Text)
	require.Contains(t, r.Detail, "status 404")

	r = probe("/html/metrics")
	require.True(t, r.Answered)
	require.False(t, r.Text)
	require.Contains(t, r.Detail, "not the Prometheus text format")
	require.Empty(t, r.Engine)

	r = probe("/big/metrics")
	require.True(t, r.Answered)
	require.False(t, r.Text)
	require.Contains(t, r.Detail, "body over")

	_, err := Probe(t.Context(), Config{URL: "gpu-box/metrics"})
	require.ErrorIs(t, err, errInvalidConfig)
}

package capacity

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLlamaCppTTFTCrossCheck: llama.cpp has no TTFT histogram, and its
// runs are cross-checked on each response's own prompt time instead. A
// plain handler serves the captured b10573 stream (timings.prompt_ms
// 104.236) 150 ms after each request, and the captured /metrics: the
// check is the server's mean prompt time against the client's mean time
// to the first output of the same requests, 45.764 ms apart.
func TestLlamaCppTTFTCrossCheck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := loadCapture(t, "llamacpp-b10573-stream-usage.headers", "llamacpp-b10573-stream-usage.sse")
		metrics, err := os.ReadFile(filepath.Join("servermetrics", "testdata", "llamacpp-b10573-metrics.txt"))
		require.NoError(t, err)
		chat := replay(c, nil, nil)
		mux := http.NewServeMux()
		mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			_, _ = w.Write(metrics)
		})
		mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/chat/completions" {
				time.Sleep(150 * time.Millisecond)
			}
			chat.ServeHTTP(w, r)
		})
		rep, err := runReplay(t, mux, Workload{Requests: 3, Concurrency: 1, ContextTokens: transcriptContext, MaxTokens: 8}, false)
		require.NoError(t, err)
		require.Empty(t, rep.Failures)
		m := rep.AnvilGo.ServerMetrics
		require.NotNil(t, m)
		require.Equal(t, "llamacpp", *m.Engine)
		require.NotNil(t, m.Checks)
		tc := m.Checks.TTFT
		require.NotNil(t, tc, "the prompt times are the cross-check")
		require.Equal(t, "server_timings.prompt_ms", tc.Histogram)
		require.Equal(t, 3.0, tc.ServerRequests)
		require.InDelta(t, 104.236, tc.ServerMeanMS, 1e-9)
		require.InDelta(t, 150, tc.ClientMeanMS, 1e-9)
		require.InDelta(t, 45.764, tc.NetworkAndClientMS, 1e-9)
	})
}

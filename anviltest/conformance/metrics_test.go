package conformance

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
)

// captureDir holds the real /metrics captures (provenance in its README).
var captureDir = filepath.Join("..", "..", "capacity", "servermetrics", "testdata")

// TestMetricsCheck: the metrics check against plain handlers serving the
// real captures of llama.cpp, vLLM and SGLang, a server without the
// endpoint, one answering HTML, and the sampler turned off. The
// Target's headers reach the endpoint.
func TestMetricsCheck(t *testing.T) {
	capture := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(captureDir, name))
		require.NoError(t, err)
		return b
	}
	for _, tc := range []struct {
		name    string
		body    []byte // nil: 404
		ct      string
		off     bool
		outcome Outcome
		reason  string
	}{
		{"llama.cpp", capture("llamacpp-b10573-metrics.txt"), "text/plain; version=0.0.4", false, Pass,
			"/metrics parses (15 families) with llamacpp's names, 9 of its 9 curated series"},
		{"vLLM", capture("vllm-fork-0.6.3dev-metrics-idle-from-FerranAgulloLopez-vLLMBatchingMemoryGap.txt"), "text/plain; version=0.0.4", false, Pass,
			"with vllm's names"},
		{"SGLang", capture("sglang-unknown-metrics-docs-example-from-sgl-project-sglang.txt"), "text/plain; version=0.0.4", false, Pass,
			"with sglang's names, 8 of its 8 curated series"},
		{"absent", nil, "", false, Skip, "no metrics endpoint at http://"},
		{"HTML", []byte("<html><body>dashboard</body></html>"), "text/html", false, Fail, "not in the Prometheus text format"},
		{"off", nil, "", true, Skip, "the metrics sampler is off"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var auth []string
			mux := http.NewServeMux()
			mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, _ *http.Request) {
				_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"m","object":"model"}]}`))
			})
			mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
				auth = append(auth, r.Header.Get("X-Api-Key"))
				if tc.body == nil {
					http.NotFound(w, r)
					return
				}
				w.Header().Set("Content-Type", tc.ct)
				_, _ = w.Write(tc.body)
			})
			srv := httptest.NewServer(mux)
			defer srv.Close()
			tg := capacity.Target{BaseURL: srv.URL + "/v1", Headers: http.Header{"X-Api-Key": {"metrics-secret"}}}
			if tc.off {
				tg.MetricsURL = "off"
			}
			s, err := New(t.Context(), Config{Target: tg, Timeout: 10 * time.Second})
			require.NoError(t, err)
			v := s.Check(t.Context(), nameMetrics)
			require.Equal(t, tc.outcome, v.Outcome, "%s %q", v.Reason, v.Notes)
			require.Contains(t, v.Reason, tc.reason)
			require.NotContains(t, v.Reason, "metrics-secret")
			if tc.off {
				require.Empty(t, auth)
			} else {
				require.Equal(t, []string{"metrics-secret"}, auth)
			}
		})
	}
}

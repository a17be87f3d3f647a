package capacity

import (
	"encoding/json"
	"net/http"
	"os"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/wiretest"
	"github.com/anvilbench/anvil/capacity/servermetrics"
	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// metricsBeside serves the fake's chat routes and, at /metrics, metrics
// (nil: a 404), recording the header of every GET /metrics.
type metricsBeside struct {
	mu      sync.Mutex
	headers []http.Header
}

func (m *metricsBeside) client(t *testing.T, metrics []byte) *http.Client {
	srv := fakeserver.NewInMemory(fakeserver.Fast())
	t.Cleanup(srv.Close)
	mux := http.NewServeMux()
	mux.Handle("/", srv.Handler())
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		m.headers = append(m.headers, r.Header.Clone())
		m.mu.Unlock()
		if metrics == nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write(metrics)
	})
	return wiretest.Serve(t, mux)
}

// TestRunSamplesAPlainServersMetrics: a plain server serving llama.cpp's
// real /metrics capture, found at the default endpoint of a base URL with
// credentials: every GET carries the Target's headers, the endpoint is
// recorded without the userinfo, no credential reaches the artifact, and
// the curated llama.cpp series are sampled.
func TestRunSamplesAPlainServersMetrics(t *testing.T) {
	capture, err := os.ReadFile("servermetrics/testdata/llamacpp-b10573-metrics.txt")
	require.NoError(t, err)
	synctest.Test(t, func(t *testing.T) {
		var m metricsBeside
		tg := Target{BaseURL: "http://user:pass-secret@llama.invalid/v1", HTTPClient: m.client(t, capture),
			Headers: http.Header{"X-Api-Key": {"hdr-secret"}}}
		rep, err := Run(t.Context(), tg, Workload{Requests: 4, Concurrency: 2, ContextTokens: 256})
		require.NoError(t, err)
		sm := rep.AnvilGo.ServerMetrics
		require.NotNil(t, sm)
		require.Equal(t, "http://llama.invalid/metrics", sm.Endpoint)
		require.Equal(t, "llamacpp", *sm.Engine)
		require.Equal(t, 1000.0, sm.IntervalMS)
		require.GreaterOrEqual(t, sm.Samples, 2, "one at the start, one at the end")
		names := map[string]bool{}
		for _, s := range sm.Series {
			names[s.Name] = true
		}
		require.True(t, names["llamacpp:requests_processing"], "%v", names)
		require.True(t, names["llamacpp:tokens_predicted_total"], "%v", names)

		m.mu.Lock()
		require.Len(t, m.headers, 1+sm.Samples, "the discovery, then every sample")
		for _, h := range m.headers {
			require.Equal(t, "hdr-secret", h.Get("X-Api-Key"))
		}
		m.mu.Unlock()
		js, err := json.Marshal(rep)
		require.NoError(t, err)
		require.NotContains(t, string(js), "pass-secret")
		require.NotContains(t, string(js), "hdr-secret")
		require.NotNil(t, rep.AnvilGo.Audit)
	})
}

// TestRunWithoutMetricsEndpoint: a server with no /metrics has no
// server_metrics member and runs as before; one GET found that out. The
// audit is there all the same.
func TestRunWithoutMetricsEndpoint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var m metricsBeside
		rep, err := Run(t.Context(), Target{BaseURL: "http://none.invalid/v1", HTTPClient: m.client(t, nil)},
			Workload{Requests: 3, Concurrency: 1, ContextTokens: 256})
		require.NoError(t, err)
		require.Equal(t, 3, rep.Completed)
		require.Nil(t, rep.AnvilGo.ServerMetrics)
		require.NotNil(t, rep.AnvilGo.Audit)
		require.Len(t, m.headers, 1)
	})
}

// TestRunMetricsURLChecked: an explicit MetricsURL that does not answer
// stops the run before anything is measured, naming the endpoint without
// its credentials; off sends no GET; bad values name their field.
func TestRunMetricsURLChecked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var m metricsBeside
		hc := m.client(t, nil)
		rep, err := Run(t.Context(), Target{BaseURL: "http://x.invalid/v1", HTTPClient: hc,
			MetricsURL: "http://u:pw-secret@x.invalid/metrics"}, Workload{Requests: 3, Concurrency: 1, ContextTokens: 256})
		require.ErrorIs(t, err, servermetrics.ErrNoEndpoint)
		require.Nil(t, rep)
		require.Contains(t, err.Error(), "http://x.invalid/metrics")
		require.NotContains(t, err.Error(), "pw-secret")

		m.headers = nil
		rep, err = Run(t.Context(), Target{BaseURL: "http://x.invalid/v1", HTTPClient: hc, MetricsURL: "off"},
			Workload{Requests: 1, Concurrency: 1, ContextTokens: 256})
		require.NoError(t, err)
		require.Nil(t, rep.AnvilGo.ServerMetrics)
		require.Empty(t, m.headers)
	})
	for _, tc := range []struct {
		t     Target
		field string
	}{
		{Target{BaseURL: "http://x/v1", MetricsURL: "ftp://x/metrics"}, "Target.MetricsURL"},
		{Target{BaseURL: "http://x/v1", MetricsInterval: time.Millisecond}, "Target.MetricsInterval"},
		{Target{BaseURL: "http://x/v1", MetricsInterval: 2 * time.Hour}, "Target.MetricsInterval"},
	} {
		_, err := tc.t.Resolved()
		require.ErrorIs(t, err, ErrInvalidConfig)
		require.Contains(t, err.Error(), tc.field)
	}
}

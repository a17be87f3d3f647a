package capacity

import (
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// nativeStep is the documented bound of each native discovery step
// (capacity/PROTOCOL.md#context-window-discovery).
const nativeStep = 5 * time.Second

// TestNativeStepIsBounded: a /props that accepts the request and never
// answers costs the discovery exactly nativeStep, and Ollama's
// /api/ps is still asked and gives the window; Discovery.Asked says so.
func TestNativeStepIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			mu    sync.Mutex
			asked []string
		)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			asked = append(asked, r.Method+" "+r.URL.Path)
			mu.Unlock()
			switch r.URL.Path {
			case "/v1/models":
				_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"tiny:latest","object":"model"}]}`))
			case "/props":
				<-r.Context().Done()
			case "/api/ps":
				_, _ = w.Write([]byte(`{"models":[{"name":"tiny:latest","model":"tiny:latest","context_length":4096}]}`))
			default:
				http.NotFound(w, r)
			}
		})
		start := time.Now()
		d, err := Discover(t.Context(), Target{BaseURL: "http://hang.invalid/v1", HTTPClient: wiretest.Serve(t, h)})
		require.NoError(t, err)
		require.Equal(t, nativeStep, time.Since(start), "the hanging /props costs its bound, not the request timeout")
		mu.Lock()
		require.Equal(t, []string{"GET /v1/models", "GET /props", "GET /api/ps"}, asked)
		mu.Unlock()
		require.Equal(t, 4096, d.Window)
		require.Equal(t, "/api/ps", d.WindowSource)
		require.Equal(t, []string{
			"GET /models: 1 model, no window",
			"GET /props: timed out after 5s",
			"GET /api/ps: answered, window 4096",
		}, d.Asked)
	})
}

// TestNativeStepsEachBounded: when every native endpoint hangs, each
// costs its own bound (/props, /api/ps, /api/show: three bounds in
// all), a Run with a shorter Workload.Timeout bounds each by that, and
// the error names no window source.
func TestNativeStepsEachBounded(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration // Run's Workload.Timeout; 0: Discover
		step    time.Duration
	}{
		{"Discover", 0, nativeStep},
		{"Run, short request timeout", 2 * time.Second, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				stop := make(chan struct{}) // ends a handler the client left
				t.Cleanup(func() { close(stop) })
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/v1/models" {
						_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"m"}]}`))
						return
					}
					select {
					case <-r.Context().Done():
					case <-stop:
					}
				})
				target := Target{BaseURL: "http://hang.invalid/v1", HTTPClient: wiretest.Serve(t, h), MetricsURL: "off"}
				start := time.Now()
				var err error
				if tt.timeout == 0 {
					var d Discovery
					d, err = Discover(t.Context(), target)
					require.Equal(t, []string{
						"GET /models: 1 model, no window",
						"GET /props: timed out after 5s",
						"GET /api/ps: timed out after 5s",
						"POST /api/show: timed out after 5s",
					}, d.Asked)
					require.Zero(t, d.Window)
					require.Empty(t, d.WindowSource, "no window, so no source")
				} else {
					_, err = Run(t.Context(), target, Workload{Requests: 1, ContextTokens: 512, Timeout: tt.timeout})
				}
				require.ErrorIs(t, err, ErrInvalidConfig)
				require.Equal(t, 3*tt.step, time.Since(start))
			})
		})
	}
}

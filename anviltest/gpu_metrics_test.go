package anviltest

import (
	"bytes"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
	fakeserver "github.com/anvilbench/anvil/fake_server"
	"github.com/anvilbench/anvil/reporters"
)

// TestGPUVariables: ANVIL_GPU_METRICS_URL's list, ANVIL_GPUS and the
// prices fill the Target; a bad value names its variable.
func TestGPUVariables(t *testing.T) {
	s := newSettings([]Option{WithEnvironment(env{
		envBaseURL:         "http://gpu-box:8000/v1",
		envGPUMetricsURL:   "http://node-a:9400/metrics, http://node-b:9400/metrics",
		envGPUs:            "0,GPU-5fd3e0c1-0000-0000-0000-000000000000",
		envPricePerGPUHour: "2.49",
		envPricePerKWh:     "0.15",
	}.get)})
	tg, err := s.resolveTarget()
	require.NoError(t, err)
	require.Equal(t, []string{"http://node-a:9400/metrics", "http://node-b:9400/metrics"}, tg.GPUMetricsURLs)
	require.Equal(t, []string{"0", "GPU-5fd3e0c1-0000-0000-0000-000000000000"}, tg.GPUs)
	require.Equal(t, 2.49, *tg.PricePerGPUHour)
	require.Equal(t, 0.15, *tg.PricePerKWh)

	for name, bad := range map[string]string{envGPUMetricsURL: "node-a:9400", envGPUs: "first", envPricePerKWh: "-0.1", envPricePerGPUHour: "cheap"} {
		_, err := readEnvironment(env{name: bad}.get)
		var fe *capacity.FieldError
		require.True(t, errors.As(err, &fe), "%s: %v", name, err)
		require.Equal(t, name, fe.Field)
	}
}

// TestGPUMetricsEndToEnd: a run against the embedded fake serving the DCGM
// exporter's format records the GPUs' power, energy and utilisation; its
// energy per output token is the fake's configured joules (within 1%);
// the HTML report draws the power on the timeline's time axis, and the
// benchmark line carries J/output-tok.
func TestGPUMetricsEndToEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg, err := fakeserver.Slots(4, 100*time.Millisecond)
		require.NoError(t, err)
		cfg.GPUs, cfg.GPUJoulesPerToken = 4, 1.5
		srv := fakeserver.NewInMemory(cfg)
		defer srv.Close()
		rep, err := capacity.Run(t.Context(), capacity.Target{BaseURL: srv.BaseURL(), HTTPClient: srv.Client(),
			MetricsInterval: 50 * time.Millisecond, GPUMetricsURLs: []string{srv.URL + "/dcgm-exporter/metrics"}},
			capacity.Workload{Requests: 32, Concurrency: 4, ContextTokens: 256})
		require.NoError(t, err)
		require.Equal(t, 32, rep.Completed)
		require.InEpsilon(t, 1.5, *rep.AnvilGo.Energy.JoulesPerOutputToken, 0.01)

		var page bytes.Buffer
		require.NoError(t, reporters.WriteHTML(&page, rep))
		require.Contains(t, page.String(), `id="timeline-1-gpu-power"`)
		require.Contains(t, page.String(), "GPU power (DCGM_FI_DEV_POWER_USAGE)")
		require.Contains(t, page.String(), `id="timeline-1-gpu-util"`)

		res, err := reporters.BenchResult(rep, "")
		require.NoError(t, err)
		var jpt float64
		for _, v := range res.Values {
			if v.Unit == "J/output-tok" {
				jpt = v.Value
			}
		}
		require.InEpsilon(t, 1.5, jpt, 0.01)
	})
}

package capacity_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// TestRunGPUMetrics: against the fake serving two GPUs in the DCGM
// exporter's own format, a run records their power, energy and
// utilisation on its clock; with idle GPUs drawing nothing the energy
// per output token is the fake's configured joules per token (within
// 1%), and with 50 W idle each the energy above the idle baseline is.
func TestRunGPUMetrics(t *testing.T) {
	for _, idle := range []float64{0, 50} {
		synctest.Test(t, func(t *testing.T) {
			cfg, err := fakeserver.Slots(4, 100*time.Millisecond)
			require.NoError(t, err)
			cfg.GPUs, cfg.GPUIdleWatts, cfg.GPUJoulesPerToken = 2, idle, 0.75
			srv := fakeserver.NewInMemory(cfg)
			defer srv.Close()

			w := capacity.Workload{Requests: 48, Concurrency: 8, ContextTokens: 256}
			rep, err := capacity.Run(t.Context(), capacity.Target{BaseURL: srv.BaseURL(), HTTPClient: srv.Client(),
				MetricsInterval: 100 * time.Millisecond, GPUMetricsURLs: []string{srv.URL + "/dcgm-exporter/metrics"},
				PricePerGPUHour: new(2.0)}, w)
			require.NoError(t, err)
			require.Equal(t, 48, rep.Completed, "failures: %+v", rep.Failures)

			gm := rep.AnvilGo.GPUMetrics
			require.Len(t, gm, 1)
			require.Equal(t, "dcgm", *gm[0].Engine)
			require.Zero(t, gm[0].Failed)
			seen := map[string]int{}
			for _, s := range gm[0].Series {
				seen[s.Name]++
				require.Equal(t, "anvil-fake", s.Labels["hostname"])
				require.NotContains(t, s.Labels, "pci_bus_id")
				require.Equal(t, 0.0, s.OffsetsMS[0], "the phase's first sample")
				require.Equal(t, rep.WallClockMS, s.OffsetsMS[len(s.OffsetsMS)-1], "the phase's last")
			}
			for _, f := range []string{"DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_GPU_UTIL"} {
				require.Equal(t, 2, seen[f], f)
			}

			en := rep.AnvilGo.Energy
			require.NotNil(t, en)
			t.Logf("idle %v W: %.1f J over %.3f s, %d output tokens: %.4f J/output-tok, %.4f active, %.4f J/tok",
				idle, en.Joules, en.Seconds, en.OutputTokens, *en.JoulesPerOutputToken, deref(en.ActiveJoulesPerOutputToken), *en.JoulesPerToken)
			require.Equal(t, "counter", en.Method)
			require.Equal(t, 2, en.GPUs)
			tokens, _ := rep.CompletionTokens()
			require.Equal(t, tokens, en.OutputTokens)
			require.InDelta(t, rep.WallClockMS/1000, en.Seconds, 1e-9)
			require.InDelta(t, 2*idle, *en.IdleWatts, 2*idle*0.01+1e-3)
			if idle == 0 {
				require.InEpsilon(t, 0.75, *en.JoulesPerOutputToken, 0.01)
			} else {
				require.Greater(t, *en.JoulesPerOutputToken, 0.75*1.05, "the idle GPUs' energy is in it")
				require.InEpsilon(t, 0.75, *en.ActiveJoulesPerOutputToken, 0.01)
			}
			require.Less(t, *en.JoulesPerToken, *en.JoulesPerOutputToken)
			require.InEpsilon(t, 2*en.Seconds/3600*2/float64(tokens)*1e6, *en.CostPerMillionOutputTokens, 1e-9)
		})
	}
}

// TestRunGPUMetricsRefused: an exporter URL that is the engine's own
// /metrics, and a price without exporters, are refused before the run.
func TestRunGPUMetricsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg, err := fakeserver.Slots(4, 100*time.Millisecond)
		require.NoError(t, err)
		srv := fakeserver.NewInMemory(cfg)
		defer srv.Close()
		w := capacity.Workload{Requests: 4, Concurrency: 1, ContextTokens: 256}
		_, err = capacity.Run(t.Context(), capacity.Target{BaseURL: srv.BaseURL(), HTTPClient: srv.Client(),
			GPUMetricsURLs: []string{srv.URL + "/metrics"}}, w)
		require.ErrorContains(t, err, "no DCGM exporter family")
		_, err = capacity.Run(t.Context(), capacity.Target{BaseURL: srv.BaseURL(), HTTPClient: srv.Client(), PricePerKWh: new(0.2)}, w)
		require.ErrorIs(t, err, capacity.ErrInvalidConfig)
		require.ErrorContains(t, err, "Target.GPUMetricsURLs")
	})
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// TestRunSpecDecode: against the fake vLLM with speculation counters
// (drafts of 4 tokens, 3 tokens a step: 2 of 4 accepted), the run's
// acceptance rate is exactly the configured 0.5 and its mean accepted
// length 3, which the streams' 3 tokens a chunk agree with; the same
// server re-chunking its stream into one token a chunk is named as a
// disagreement.
func TestRunSpecDecode(t *testing.T) {
	for _, perChunk := range []int{0, 1} {
		synctest.Test(t, func(t *testing.T) {
			cfg, err := fakeserver.Slots(4, 100*time.Millisecond)
			require.NoError(t, err)
			cfg.SpecTokens, cfg.SpecDraftTokens, cfg.TokensPerChunk = fakeserver.Range{Min: 3, Max: 3}, 4, perChunk
			srv := fakeserver.NewInMemory(cfg)
			defer srv.Close()
			w := capacity.Workload{Requests: 24, Concurrency: 4, ContextTokens: 256, MaxTokens: 61, Warmup: 4}
			rep, err := capacity.Run(t.Context(), capacity.Target{BaseURL: srv.BaseURL(), HTTPClient: srv.Client(),
				MetricsInterval: 100 * time.Millisecond}, w)
			require.NoError(t, err)
			require.Equal(t, 24, rep.Completed, "failures: %+v", rep.Failures)
			sd := rep.AnvilGo.ServerMetrics.SpecDecode
			require.NotNil(t, sd)
			require.Equal(t, "counters", sd.Method)
			require.Equal(t, 0.5, *sd.AcceptanceRate, "exactly (SpecTokens-1)/SpecDraftTokens")
			require.Equal(t, 3.0, *sd.MeanAcceptedLength)
			require.Equal(t, []float64{1, 1, 0, 0}, sd.PerPosition)
			if perChunk == 0 {
				require.InEpsilon(t, 3.0, *sd.ClientTokensPerChunk, 0.1)
				require.Equal(t, "agree", sd.Agreement)
				return
			}
			require.Equal(t, 1.0, *sd.ClientTokensPerChunk)
			require.Equal(t, "disagree", sd.Agreement)
			require.Contains(t, *sd.Note, "re-chunked")
		})
	}
}

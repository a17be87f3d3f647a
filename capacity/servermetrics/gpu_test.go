package servermetrics

import (
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// TestGPUsDocumentedBody: the DCGM exporter's documented body (a whole
// A100 and one of its MIG instances, untyped, the Hostname label) served
// by a plain handler: recognised as a GPU endpoint, the curated families
// kept with the GPU's labels only (device and the profile dropped), the
// MIG instance's series apart, and its energy and power series counted
// for the whole GPU alone. On the bubble's clock: the discovery's and the
// scrapes' timeouts cannot run out on a loaded machine.
func TestGPUsDocumentedBody(t *testing.T) {
	synctest.Test(t, testGPUsDocumentedBody)
}

func testGPUsDocumentedBody(t *testing.T) {
	body := readCapture(t, "dcgm-exporter-docs-mig.txt")
	node := handlerClient(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write(body)
	}))
	g, err := Config{Interval: 50 * time.Millisecond, Client: node}.DiscoverGPUs(t.Context(), []string{"http://node-a:9400/metrics"}, nil, nil)
	require.NoError(t, err)
	g.Prime(t.Context())
	end := g.Start(t.Context(), time.Now())
	g.Finish()
	rep := &artifact.Report{}
	end(rep)
	ms := rep.AnvilGo.GPUMetrics
	require.Len(t, ms, 1)
	m := ms[0]
	require.Equal(t, "dcgm", *m.Engine)
	whole := map[string]string{"gpu": "0", "UUID": "GPU-34319582-d595-d1c7-d1d2-179bcfa61660", "Hostname": "ub20-a100-k8s"}
	mig := map[string]string{"gpu": "0", "UUID": "GPU-34319582-d595-d1c7-d1d2-179bcfa61660", "Hostname": "ub20-a100-k8s", "GPU_I_ID": "13"}
	got := map[string]map[string]string{}
	for _, s := range m.Series {
		key := s.Name
		if s.Labels["GPU_I_ID"] != "" {
			key += "/mig"
		}
		got[key] = s.Labels
		require.Len(t, s.Values, m.Samples, "%s: a point per sample", s.Name)
	}
	want := map[string]map[string]string{}
	for _, f := range []string{"DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
		"DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_USED", "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_DRAM_ACTIVE"} {
		want[f] = whole
	}
	for _, f := range []string{"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_DRAM_ACTIVE"} {
		want[f+"/mig"] = mig
	}
	require.Empty(t, cmp.Diff(want, got), "DCGM_FI_DEV_GPU_UTIL is not in the documented body")
	for _, s := range m.Series {
		if s.Name == dcgmPower {
			require.Equal(t, 409.692, s.Values[0])
		}
	}
	// A body that never changes: a counter that does not move, so the
	// power is integrated (409.692 W over the phase), and no idle counter.
	en := rep.AnvilGo.Energy
	require.NotNil(t, en)
	require.Equal(t, 1, en.GPUs)
	require.Equal(t, energyPower, en.Method)
	require.InDelta(t, 409.692*en.Seconds, en.Joules, 1e-6)
	require.Equal(t, energyPower, en.IdleMethod)
	require.Equal(t, 409.692, *en.IdleWatts)
	require.Nil(t, en.JoulesPerOutputToken, "no tokens")
	require.Equal(t, []string{"ub20-a100-k8s/0"}, slices.Sorted(maps.Keys(en.PerGPU)))
}

// fakeGPUNode is a plain handler of a DCGM exporter's body for gpus
// GPUs on the bubble's clock: each draws idle W until phaseAt, then busy
// W; energy is the exact integral (mJ), power the draw at the scrape.
// Without counter the body has no energy family.
type fakeGPUNode struct {
	t0, phaseAt time.Time
	gpus        int
	idle, busy  float64
	counter     bool
}

func (n *fakeGPUNode) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	now := time.Now()
	power, joules := n.idle, n.idle*now.Sub(n.t0).Seconds()
	if !n.phaseAt.IsZero() && !now.Before(n.phaseAt) {
		power = n.busy
		joules = n.idle*n.phaseAt.Sub(n.t0).Seconds() + n.busy*now.Sub(n.phaseAt).Seconds()
	}
	var b strings.Builder
	b.WriteString("# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).\n# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n")
	for g := range n.gpus {
		fmt.Fprintf(&b, "DCGM_FI_DEV_POWER_USAGE{gpu=\"%d\",UUID=\"GPU-%d\",pci_bus_id=\"00000000:%02X:00.0\",device=\"nvidia%d\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node-a\",DCGM_FI_DRIVER_VERSION=\"570.124.06\"} %f\n", g, g, g, g, power)
	}
	if n.counter {
		b.WriteString("# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption since boot (in mJ).\n# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n")
		for g := range n.gpus {
			fmt.Fprintf(&b, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"%d\",UUID=\"GPU-%d\",pci_bus_id=\"00000000:%02X:00.0\",device=\"nvidia%d\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node-a\",DCGM_FI_DRIVER_VERSION=\"570.124.06\"} %d\n", g, g, g, g, 31035686671+int64(joules*1000))
		}
	}
	_, _ = io.WriteString(w, b.String())
}

// energyRun runs GPUs over a node for a phase of 10 s on the bubble's
// clock and returns anvil_go.energy, with 1000 output and 5000 total
// tokens in the report.
func energyRun(t *testing.T, node *fakeGPUNode, gpus []string, perGPUHour, perKWh *float64) *artifact.Energy {
	t.Helper()
	node.t0 = time.Now()
	cfg := Config{Interval: time.Second, Client: handlerClient(node), GPUs: gpus}
	g, err := cfg.DiscoverGPUs(t.Context(), []string{"http://node-a:9400/metrics"}, perGPUHour, perKWh)
	require.NoError(t, err)
	g.Prime(t.Context())
	start := time.Now()
	node.phaseAt = start
	end := g.Start(t.Context(), start)
	time.Sleep(10 * time.Second)
	g.Finish()
	rep := &artifact.Report{RequestTimings: []artifact.TimingRow{
		{OutputTokens: new(600), PromptTokens: new(2400)}, {OutputTokens: new(400), PromptTokens: new(1600)}}}
	end(rep)
	require.Len(t, rep.AnvilGo.GPUMetrics, 1)
	return rep.AnvilGo.Energy
}

// TestGPUsEnergyCounter: two GPUs idling at 60 W, then drawing 300 W
// over a 10 s phase, with energy counters: exactly 6000 J, 6 J per
// output token, 1.2 per total token, an idle baseline of 120 W by the
// counters over a 1 s window, 4.8 J per output token above it, and the
// costs of the prices given.
func TestGPUsEnergyCounter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		en := energyRun(t, &fakeGPUNode{gpus: 2, idle: 60, busy: 300, counter: true}, nil, new(3.6), new(0.25))
		require.NotNil(t, en)
		require.Equal(t, energyCounter, en.Method)
		require.Equal(t, 2, en.GPUs)
		require.Equal(t, 10.0, en.Seconds)
		require.InDelta(t, 6000, en.Joules, 0.01, "the counter is in whole mJ")
		require.InDelta(t, 600, en.MeanWatts, 0.01)
		require.InDelta(t, 6.0, *en.JoulesPerOutputToken, 1e-5)
		require.InDelta(t, 1.2, *en.JoulesPerToken, 1e-5)
		require.Equal(t, energyCounter, en.IdleMethod)
		require.Equal(t, 1.0, en.IdleSeconds)
		require.InDelta(t, 120, *en.IdleWatts, 0.01)
		require.InDelta(t, 1200, *en.IdleJoules, 0.1)
		require.InDelta(t, 4.8, *en.ActiveJoulesPerOutputToken, 1e-4)
		require.Equal(t, 1000, en.OutputTokens)
		require.Equal(t, 5000, en.TotalTokens)
		// 2 GPUs x 10 s at 3.6 a GPU-hour: 0.02 for 1000 tokens, 20 a million.
		require.InDelta(t, 20, *en.CostPerMillionOutputTokens, 1e-9)
		// 6000 J = 1/600 kWh at 0.25: 1/2400 for 1000 tokens.
		require.InDelta(t, 1e6/2400/1000, *en.EnergyCostPerMillionOutputTokens, 1e-4)
		require.Empty(t, cmp.Diff([]string{"node-a/0", "node-a/1"}, slices.Sorted(maps.Keys(en.PerGPU))))
	})
}

// TestGPUsEnergyPower: without an energy counter the power is integrated
// by the trapezoid rule over the 1 s samples, and the method says so:
// the first second ramps from the idle reading at the phase's start
// (60 W) to 300 W, so 180 + 9 x 300 J per GPU.
func TestGPUsEnergyPower(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		en := energyRun(t, &fakeGPUNode{gpus: 2, idle: 60, busy: 300}, nil, nil, nil)
		require.Equal(t, energyPower, en.Method)
		require.InDelta(t, 2*(180+9*300), en.Joules, 1e-6)
		require.Equal(t, energyPower, en.IdleMethod)
		require.InDelta(t, 120, *en.IdleWatts, 1e-9)
		require.Nil(t, en.CostPerMillionOutputTokens)
		require.Nil(t, en.EnergyCostPerMillionOutputTokens)
	})
}

// TestGPUsOnly: the GPUs the user names are the only ones sampled and
// counted.
func TestGPUsOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		en := energyRun(t, &fakeGPUNode{gpus: 4, idle: 60, busy: 300, counter: true}, []string{"1", "GPU-3"}, nil, nil)
		require.Equal(t, 2, en.GPUs)
		require.Empty(t, cmp.Diff([]string{"node-a/1", "node-a/3"}, slices.Sorted(maps.Keys(en.PerGPU))))
		require.InDelta(t, 6000, en.Joules, 0.01)
	})
}

// TestDiscoverGPUsRefuses: an endpoint that is not a DCGM exporter (an
// engine's /metrics), one that does not answer, and bad fields.
func TestDiscoverGPUsRefuses(t *testing.T) {
	llama := readCapture(t, "llamacpp-b10573-metrics.txt")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(llama)
	}))
	defer srv.Close()
	_, err := Config{}.DiscoverGPUs(t.Context(), []string{srv.URL + "/metrics"}, nil, nil)
	require.ErrorIs(t, err, ErrNoEndpoint)
	require.ErrorContains(t, err, "no DCGM exporter family")
	_, err = Config{}.DiscoverGPUs(t.Context(), []string{srv.URL + "/none"}, nil, nil)
	require.ErrorIs(t, err, ErrNoEndpoint)
	require.ErrorContains(t, err, "status 404")

	for _, tc := range []struct {
		cfg    Config
		urls   []string
		perKWh *float64
		want   string
	}{
		{Config{}, nil, nil, "URLs"},
		{Config{}, []string{"ftp://x"}, nil, "URLs"},
		{Config{}, []string{srv.URL}, new(-1.0), "PricePerKWh"},
		{Config{GPUs: []string{"junk"}}, []string{srv.URL}, nil, "Config.GPUs"},
		{Config{Interval: time.Nanosecond}, []string{srv.URL}, nil, "Config.Interval"},
	} {
		require.ErrorContains(t, tc.cfg.CheckGPUs(tc.urls, nil, tc.perKWh), tc.want)
	}
	lo, hi := Config{}.IntervalRange()
	require.Equal(t, [2]time.Duration{10 * time.Millisecond, time.Hour}, [2]time.Duration{lo, hi})
}

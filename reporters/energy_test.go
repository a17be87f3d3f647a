package reporters

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// withGPUs is the saturated run with two GPUs of a DCGM exporter sampled
// at its server metrics' offsets (100 W then 300 W each, 0% then 100%
// busy), its energy and its server's speculation.
func withGPUs(t *testing.T) *artifact.Report {
	r := loadReport(t, saturatedPath)
	var at []float64
	for _, s := range r.AnvilGo.ServerMetrics.Series {
		at = s.OffsetsMS
		break
	}
	require.NotEmpty(t, at)
	m := artifact.ServerMetrics{Endpoint: "http://node-a:9400/metrics", Engine: new("dcgm"), IntervalMS: 1000, TimeoutMS: 250,
		Samples: len(at), MaxPointsPerSeries: 240}
	for g, uuid := range []string{"GPU-a", "GPU-b"} {
		labels := map[string]string{"gpu": string(rune('0' + g)), "UUID": uuid, "hostname": "node-a"}
		power, util := make([]float64, len(at)), make([]float64, len(at))
		for i := range at {
			power[i], util[i] = 100, 0
			if i > 0 {
				power[i], util[i] = 300, 100
			}
		}
		m.Series = append(m.Series,
			artifact.MetricSeries{Name: "DCGM_FI_DEV_POWER_USAGE", Type: "gauge", Labels: labels, SamplesPerPoint: 1, OffsetsMS: at, Values: power},
			artifact.MetricSeries{Name: "DCGM_FI_DEV_GPU_UTIL", Type: "gauge", Labels: labels, SamplesPerPoint: 1, OffsetsMS: at, Values: util})
	}
	r.AnvilGo.GPUMetrics = []artifact.ServerMetrics{m}
	r.AnvilGo.Energy = &artifact.Energy{Method: "counter", GPUs: 2, Joules: 6000, Seconds: 10, MeanWatts: 600,
		IdleWatts: new(120.0), IdleJoules: new(1200.0), IdleMethod: "counter", IdleSeconds: 1,
		OutputTokens: 1000, TotalTokens: 5000, JoulesPerOutputToken: new(6.0), JoulesPerToken: new(1.2), ActiveJoulesPerOutputToken: new(4.8),
		PricePerGPUHour: new(3.6), CostPerMillionOutputTokens: new(20.0), PerGPU: map[string]float64{"node-a/0": 3000, "node-a/1": 3000}}
	r.AnvilGo.ServerMetrics.SpecDecode = &artifact.SpecDecode{Method: "counters", Drafts: new(60.0), DraftTokens: new(240.0), AcceptedTokens: new(120.0),
		AcceptanceRate: new(0.5), MeanAcceptedLength: new(3.0), PerPosition: []float64{0.9, 0.6, 0.3, 0.2},
		ClientTokensPerChunk: new(1.0), Agreement: "disagree", Note: new("the stream is re-chunked on its way")}
	return r
}

// TestHTMLGPUTimeline: the GPUs' summed power and mean utilisation are
// drawn on the requests' time axis, and the header carries the energy and
// the speculation.
func TestHTMLGPUTimeline(t *testing.T) {
	r := withGPUs(t)
	v := serverViewOf(r.AnvilGo.ServerMetrics, r.AnvilGo.GPUMetrics)
	require.Equal(t, 600.0, gaugeMax(v.Power), "summed over the GPUs")
	require.Equal(t, 200.0, v.Power.Vals[0])
	require.Equal(t, 100.0, gaugeMax(v.Util), "averaged")
	require.Equal(t, r.AnvilGo.GPUMetrics[0].Series[0].OffsetsMS, v.Power.At, "on the run's clock")
	page := string(renderHTML(t, r))
	require.Contains(t, page, `id="timeline-1-gpu-power"`)
	require.Contains(t, page, `id="timeline-1-gpu-util"`)
	require.Contains(t, page, "<title>GPU power (DCGM_FI_DEV_POWER_USAGE): ")
	require.Contains(t, page, ", max 600</title>")
	require.Contains(t, page, "6.00 J/output-tok, 1.20 J/tok")
	require.Contains(t, page, "acceptance 0.500")

	// GPU metrics alone still draw their charts.
	r.AnvilGo.ServerMetrics = nil
	v = serverViewOf(nil, r.AnvilGo.GPUMetrics)
	require.NotNil(t, v)
	require.Nil(t, v.Running)
}

// TestSummaryEnergyLines: the summary and the benchmark log carry the GPU
// endpoint, the energy with its rule's method and idle baseline, and the
// speculation with the disagreement named; the benchmark line carries
// J/output-tok.
func TestSummaryEnergyLines(t *testing.T) {
	r := withGPUs(t)
	s := summaryOf(t, r)
	require.Contains(t, s, "GPU metrics http://node-a:9400/metrics: 2 GPUs,")
	require.Contains(t, s, "energy (counter, 2 GPUs): 6000 J over 10 s, mean 600 W; 6.00 J/output-tok, 1.20 J/tok (1000 output, 5000 total tokens); "+
		"idle 120 W (counter over 1 s before the phase), 4.80 J/output-tok above it; 20.0 per million output tokens at 3.6 a GPU-hour")
	require.Contains(t, s, "speculative decoding (counters): acceptance 0.500, 3.00 tokens per step over 60 drafts; by position 90% 60% 30% 20%; "+
		"client 1.00 tokens per chunk: disagree (the stream is re-chunked on its way)")
	require.True(t, slices.ContainsFunc(RunLog(r), func(l string) bool { return strings.Contains(l, "J/output-tok") }))

	res, err := BenchResult(r, "")
	require.NoError(t, err)
	found := false
	for _, v := range res.Values {
		if v.Unit == "J/output-tok" {
			found = true
			require.Equal(t, 6.0, v.Value)
		}
	}
	require.True(t, found)

	r.AnvilGo.Energy = nil
	require.Contains(t, summaryOf(t, r), "energy: none (no GPU had")
}

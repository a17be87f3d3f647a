package reporters

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// The server's state beside the requests: the gauges of
// anvil_go.server_metrics the report draws, each by the names the curated
// engines give it (the first one the artifact has wins). A gauge with
// several label sets (vLLM's data-parallel engines) is their sum at each
// sample.
var (
	runningGauges = []string{"vllm:num_requests_running", "sglang:num_running_reqs", "llamacpp:requests_processing", "tgi_batch_current_size"}
	waitingGauges = []string{"vllm:num_requests_waiting", "sglang:num_queue_reqs", "llamacpp:requests_deferred", "tgi_queue_size"}
	// kvGauges are shares in [0, 1].
	kvGauges = []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "sglang:token_usage", "llamacpp:kv_cache_usage_ratio"}
)

// gaugeView is one gauge over the run: offsets from the run's start (ms)
// and values, in offset order.
type gaugeView struct {
	Name string
	At   []float64
	Vals []float64
}

// The GPUs' gauges of anvil_go.gpu_metrics the report draws: their power
// summed over every GPU of every node, and their utilisation averaged.
const (
	gpuPowerGauge = "DCGM_FI_DEV_POWER_USAGE"
	gpuUtilGauge  = "DCGM_FI_DEV_GPU_UTIL"
)

// serverView is what the report draws of a run's server metrics and its
// GPUs' (anvil_go.gpu_metrics); a nil gauge is one the run does not have.
type serverView struct {
	Running, Waiting, KV *gaugeView
	// Power is the GPUs' summed power (W); Util their mean utilisation
	// (%), each at the offsets of the samples.
	Power, Util *gaugeView
}

// serverViewOf reads the drawn gauges of m and of the GPU endpoints gpus;
// nil when they have none of them.
func serverViewOf(m *artifact.ServerMetrics, gpus []artifact.ServerMetrics) *serverView {
	v := &serverView{}
	if m != nil {
		v.Running, v.Waiting, v.KV = summedGauge(m, runningGauges), summedGauge(m, waitingGauges), summedGauge(m, kvGauges)
	}
	v.Power, v.Util = gpuGauge(gpus, gpuPowerGauge, false), gpuGauge(gpus, gpuUtilGauge, true)
	if v.Running == nil && v.Waiting == nil && v.KV == nil && v.Power == nil && v.Util == nil {
		return nil
	}
	return v
}

// gpuGauge is the GPU gauge name over every endpoint, summed over the GPUs
// at each offset (mean: averaged); a MIG instance's series (GPU_I_ID) are
// the whole GPU's again and left out. Nil when no endpoint has it.
func gpuGauge(gpus []artifact.ServerMetrics, name string, mean bool) *gaugeView {
	sum, n := map[float64]float64{}, map[float64]int{}
	for i := range gpus {
		for j := range gpus[i].Series {
			s := &gpus[i].Series[j]
			if s.Name != name || s.Labels["GPU_I_ID"] != "" {
				continue
			}
			for k, at := range s.OffsetsMS {
				if k < len(s.Values) {
					sum[at] += s.Values[k]
					n[at]++
				}
			}
		}
	}
	if len(sum) == 0 {
		return nil
	}
	g := &gaugeView{Name: name}
	for _, at := range slices.Sorted(maps.Keys(sum)) {
		v := sum[at]
		if mean {
			v /= float64(n[at])
		}
		g.At, g.Vals = append(g.At, at), append(g.Vals, v)
	}
	return g
}

// summedGauge is the first of names that m has, summed over its label
// sets at each offset; nil when m has none.
func summedGauge(m *artifact.ServerMetrics, names []string) *gaugeView {
	gauge := func(names []string) *gaugeView {
		for _, name := range names {
			sum := map[float64]float64{}
			for i := range m.Series {
				s := &m.Series[i]
				if s.Name != name {
					continue
				}
				for k, at := range s.OffsetsMS {
					if k < len(s.Values) {
						sum[at] += s.Values[k]
					}
				}
			}
			if len(sum) == 0 {
				continue
			}
			g := &gaugeView{Name: name}
			for _, at := range slices.Sorted(func(yield func(float64) bool) {
				for at := range sum {
					if !yield(at) {
						return
					}
				}
			}) {
				g.At, g.Vals = append(g.At, at), append(g.Vals, sum[at])
			}
			return g
		}
		return nil
	}
	return gauge(names)
}

// gaugeMax is the largest value of g, NaN for none.
func gaugeMax(g *gaugeView) float64 {
	if g == nil || len(g.Vals) == 0 {
		return math.NaN()
	}
	return slices.Max(g.Vals)
}

// serverMax is gaugeMax of the gauge of v that pick selects; NaN without
// server metrics.
func serverMax(v *runView, pick func(s *serverView) *gaugeView) float64 {
	if v.Server == nil {
		return math.NaN()
	}
	return gaugeMax(pick(v.Server))
}

// writeServerTimeline draws the server's running and waiting requests and
// its KV-cache use on the time axis of the request timeline (0..hi ms from
// the run's start), under it, so a TTFT that grows has the queue that
// grew beside it. It draws nothing without server metrics or without
// send offsets (the timeline then has no common time axis).
func writeServerTimeline(b *strings.Builder, id string, v *runView, hi float64) bool {
	s := v.Server
	if s == nil || !v.Offsets {
		return false
	}
	type line struct {
		label string
		g     *gaugeView
		scale float64
		style seriesStyle
	}
	draw := func(suffix, title, ylabel, desc string, lines []line, yfmt func(float64) string) {
		yhi := 0.0
		var legend []legendEntry
		var present []line
		for _, l := range lines {
			if l.g == nil {
				continue
			}
			present = append(present, l)
			legend = append(legend, legendEntry{Label: l.label, Style: l.style})
			yhi = math.Max(yhi, gaugeMax(l.g)*l.scale)
		}
		if len(present) == 0 {
			return
		}
		_, yhi = niceDomain(0, math.Max(yhi, 1), true)
		c := beginChart(b, chartSpec{
			ID: id + "-" + suffix, W: wideChartW, H: 150 + marginTop + marginBottom,
			Title: v.Label + ": " + title, Desc: desc,
			XLabel: "time since the run started (ms)", YLabel: ylabel,
			X: scale{lo: 0, hi: hi}, Y: scale{lo: 0, hi: yhi}, YFmt: yfmt, Legend: legend,
		})
		for _, l := range present {
			var d strings.Builder
			for k, at := range l.g.At {
				x, y := c.x.px(math.Min(at, hi)), c.y.px(l.g.Vals[k]*l.scale)
				if k == 0 {
					fmt.Fprintf(&d, "M%s %s", px(x), px(y))
				} else {
					fmt.Fprintf(&d, "H%sV%s", px(x), px(y)) // a gauge holds its value until the next sample
				}
			}
			fmt.Fprintf(b, `<g class="series" data-series="%s"><title>%s (%s): %d samples, max %s</title><path class="line" d="%s" stroke="%s" stroke-dasharray="%s"/></g>`,
				esc(l.label), esc(l.label), esc(l.g.Name), len(l.g.At), fmtNum(gaugeMax(l.g)*l.scale), d.String(), l.style.Color, l.style.Dash)
		}
		c.end()
	}
	draw("queue", "server requests over time", "requests",
		"The server's own gauges, sampled during the run, on the time axis of the requests above: requests running (in the batch) and waiting (queued). A queue that grows where TTFT grows is the server saturated.",
		[]line{{"running", s.Running, 1, styleOf(0)}, {"waiting", s.Waiting, 1, styleOf(1)}}, nil)
	draw("kv", "server KV-cache use over time", "KV-cache use (%)",
		"The share of the server's KV cache in use, sampled during the run, on the time axis of the requests above.",
		[]line{{"KV-cache use", s.KV, 100, styleOf(2)}}, nil)
	draw("gpu-power", "GPU power over time", "power (W)",
		"The GPUs' power draw from their DCGM exporters (DCGM_FI_DEV_POWER_USAGE), summed over every GPU, sampled on the run's clock, on the time axis of the requests above: the energy per token is its integral over the phase (capacity/PROTOCOL.md#energy).",
		[]line{{"GPU power", s.Power, 1, styleOf(3)}}, nil)
	draw("gpu-util", "GPU utilisation over time", "utilisation (%)",
		"The GPUs' utilisation from their DCGM exporters (DCGM_FI_DEV_GPU_UTIL), averaged over every GPU, on the time axis of the requests above.",
		[]line{{"GPU utilisation", s.Util, 1, styleOf(4)}}, nil)
	return true
}

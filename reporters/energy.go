package reporters

import (
	"fmt"
	"strings"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// What a token cost and whether speculation paid: the lines the benchmark
// log, the summary and the HTML header show of anvil_go.gpu_metrics,
// anvil_go.energy (capacity/PROTOCOL.md#energy) and
// anvil_go.server_metrics.spec_decode (#spec_decode).

// gpuLines are one line per GPU endpoint: its samples and failures, the
// GPUs it showed; nil without GPU metrics.
func gpuLines(r *artifact.Report) []string {
	if r.AnvilGo == nil {
		return nil
	}
	var out []string
	for i := range r.AnvilGo.GPUMetrics {
		m := &r.AnvilGo.GPUMetrics[i]
		gpus := map[string]bool{}
		for _, s := range m.Series {
			if s.Labels["GPU_I_ID"] == "" {
				gpus[s.Labels["UUID"]+"/"+s.Labels["gpu"]] = true
			}
		}
		line := fmt.Sprintf("GPU metrics %s: %d GPUs, %d samples every %s ms, %d failed",
			Printable(m.Endpoint), len(gpus), m.Samples, num(&m.IntervalMS), m.Failed)
		if m.Failed > 0 && m.LastError != nil {
			line += " (last: " + lastFailure(m.Endpoint, *m.LastError) + ")"
		}
		out = append(out, line)
	}
	return out
}

// energyLine is anvil_go.energy in one line: the GPUs' energy and mean
// power over the phase by its method, per output token and per token,
// the idle baseline beside them and the costs; "" without it, and a line
// saying so when GPU metrics were sampled but gave no energy.
func energyLine(r *artifact.Report) string {
	if r.AnvilGo == nil {
		return ""
	}
	e := r.AnvilGo.Energy
	if e == nil {
		if len(r.AnvilGo.GPUMetrics) > 0 {
			return "energy: none (no GPU had a moving DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION or a DCGM_FI_DEV_POWER_USAGE series)"
		}
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "energy (%s, %d GPUs): %s J over %s s, mean %s W; %s J/output-tok, %s J/tok (%d output, %d total tokens)",
		Printable(e.Method), e.GPUs, formatFloat(e.Joules), formatFloat(e.Seconds), formatFloat(e.MeanWatts),
		num(e.JoulesPerOutputToken), num(e.JoulesPerToken), e.OutputTokens, e.TotalTokens)
	if e.IdleWatts != nil {
		fmt.Fprintf(&b, "; idle %s W (%s over %s s before the phase), %s J/output-tok above it",
			formatFloat(*e.IdleWatts), Printable(e.IdleMethod), formatFloat(e.IdleSeconds), num(e.ActiveJoulesPerOutputToken))
	}
	if e.CostPerMillionOutputTokens != nil {
		fmt.Fprintf(&b, "; %s per million output tokens at %s a GPU-hour", num(e.CostPerMillionOutputTokens), formatFloat(*e.PricePerGPUHour))
	}
	if e.EnergyCostPerMillionOutputTokens != nil {
		fmt.Fprintf(&b, "; electricity %s per million output tokens at %s a kWh", num(e.EnergyCostPerMillionOutputTokens), formatFloat(*e.PricePerKWh))
	}
	return b.String()
}

// specLine is anvil_go.server_metrics.spec_decode in one line; "" without.
func specLine(r *artifact.Report) string {
	if r.AnvilGo == nil || r.AnvilGo.ServerMetrics == nil || r.AnvilGo.ServerMetrics.SpecDecode == nil {
		return ""
	}
	sd := r.AnvilGo.ServerMetrics.SpecDecode
	var b strings.Builder
	if sd.Method == "none" {
		b.WriteString("speculative decoding: none")
	} else {
		fmt.Fprintf(&b, "speculative decoding (%s): acceptance %s, %s tokens per step", Printable(sd.Method), num(sd.AcceptanceRate), num(sd.MeanAcceptedLength))
		if sd.Drafts != nil {
			fmt.Fprintf(&b, " over %s drafts", formatFloat(*sd.Drafts))
		}
		if len(sd.PerPosition) > 0 {
			ps := make([]string, len(sd.PerPosition))
			for i, p := range sd.PerPosition {
				ps[i] = fmt.Sprintf("%.0f%%", p*100)
			}
			fmt.Fprintf(&b, "; by position %s", strings.Join(ps, " "))
		}
	}
	if sd.ClientTokensPerChunk != nil {
		fmt.Fprintf(&b, "; client %s tokens per chunk: %s", num(sd.ClientTokensPerChunk), Printable(sd.Agreement))
	}
	if sd.Note != nil {
		b.WriteString(" (" + Printable(*sd.Note) + ")")
	}
	return b.String()
}

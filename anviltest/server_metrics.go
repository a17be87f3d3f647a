package anviltest

import "strings"

// The server-metrics sampler's variables (capacity/PROTOCOL.md#server_metrics).
const (
	// envMetricsURL sets Target.MetricsURL: the server's Prometheus
	// metrics endpoint, or off for none (unset: /metrics at the base
	// URL's root, silently absent when the server has none).
	envMetricsURL = "ANVIL_METRICS_URL"
	// envMetricsInterval sets Target.MetricsInterval: the time between
	// samples (unset: 1s).
	envMetricsInterval = "ANVIL_METRICS_INTERVAL"
	// envGPUMetricsURL sets Target.GPUMetricsURLs: the GPUs' NVIDIA DCGM
	// exporter endpoints, one URL or a comma-separated list, one per node
	// (capacity/PROTOCOL.md#gpu_metrics).
	envGPUMetricsURL = "ANVIL_GPU_METRICS_URL"
	// envGPUs sets Target.GPUs: the GPUs kept of those endpoints, a
	// comma-separated list of indices, UUIDs or label pairs.
	envGPUs = "ANVIL_GPUS"
	// envPricePerGPUHour and envPricePerKWh set Target.PricePerGPUHour and
	// Target.PricePerKWh: prices that give anvil_go.energy's costs per
	// million output tokens (#energy).
	envPricePerGPUHour = "ANVIL_PRICE_PER_GPU_HOUR"
	envPricePerKWh     = "ANVIL_PRICE_PER_KWH"
)

// splitList is a comma-separated list, each item trimmed, empty ones
// dropped.
func splitList(v string) []string {
	var out []string
	for item := range strings.SplitSeq(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

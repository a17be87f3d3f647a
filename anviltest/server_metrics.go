package anviltest

// The server-metrics sampler's variables (capacity/PROTOCOL.md#server_metrics).
const (
	// envMetricsURL sets Target.MetricsURL: the server's Prometheus
	// metrics endpoint, or off for none (unset: /metrics at the base
	// URL's root, silently absent when the server has none).
	envMetricsURL = "ANVIL_METRICS_URL"
	// envMetricsInterval sets Target.MetricsInterval: the time between
	// samples (unset: 1s).
	envMetricsInterval = "ANVIL_METRICS_INTERVAL"
)

package artifact

import (
	"encoding/json"
	"fmt"
)

// The key tables of the observers' anvil_go members
// (extension_observers.go). Optional keys are written only when set.

var tokenCheckTable = newArtTable(func(c *TokenCheck) *shape { return &c.shape },
	fieldOf("allowance", func(c *TokenCheck) *float64 { return &c.Allowance }, floatCodec),
	fieldOf("client_tokens", func(c *TokenCheck) *int { return &c.ClientTokens }, intCodec),
	fieldOf("counter", func(c *TokenCheck) *string { return &c.Counter }, stringCodec),
	fieldOf("difference", func(c *TokenCheck) *float64 { return &c.Difference }, floatCodec),
	fieldOf("reason", func(c *TokenCheck) **string { return &c.Reason }, optStringCodec),
	fieldOf("server_increase", func(c *TokenCheck) *float64 { return &c.ServerIncrease }, floatCodec),
	fieldOf("verdict", func(c *TokenCheck) *string { return &c.Verdict }, stringCodec),
)

var ttftCheckTable = newArtTable(func(c *TTFTCheck) *shape { return &c.shape },
	fieldOf("client_mean_ms", func(c *TTFTCheck) *float64 { return &c.ClientMeanMS }, floatCodec),
	fieldOf("histogram", func(c *TTFTCheck) *string { return &c.Histogram }, stringCodec),
	fieldOf("network_and_client_ms", func(c *TTFTCheck) *float64 { return &c.NetworkAndClientMS }, floatCodec),
	fieldOf("server_mean_ms", func(c *TTFTCheck) *float64 { return &c.ServerMeanMS }, floatCodec),
	fieldOf("server_requests", func(c *TTFTCheck) *float64 { return &c.ServerRequests }, floatCodec),
)

var serverChecksTable = newArtTable(func(c *ServerChecks) *shape { return &c.shape },
	fieldOf("generation_tokens", func(c *ServerChecks) **TokenCheck { return &c.GenerationTokens }, nullableCodec(tokenCheckTable.codec())),
	fieldOf("ttft", func(c *ServerChecks) **TTFTCheck { return &c.TTFT }, nullableCodec(ttftCheckTable.codec())),
)

var metricSeriesTable = newArtTable(func(s *MetricSeries) *shape { return &s.shape },
	optionalOf("increase", func(s *MetricSeries) **float64 { return &s.Increase }, floatCodec),
	fieldOf("labels", func(s *MetricSeries) *map[string]string { return &s.Labels }, mapCodec(stringMapKey[string](), stringCodec)),
	fieldOf("name", func(s *MetricSeries) *string { return &s.Name }, stringCodec),
	fieldOf("offsets_ms", func(s *MetricSeries) *[]float64 { return &s.OffsetsMS }, sliceCodec(floatCodec)),
	optionalOf("resets", func(s *MetricSeries) **int { return &s.Resets }, intCodec),
	fieldOf("samples_per_point", func(s *MetricSeries) *int { return &s.SamplesPerPoint }, intCodec),
	fieldOf("type", func(s *MetricSeries) *string { return &s.Type }, stringCodec),
	fieldOf("values", func(s *MetricSeries) *[]float64 { return &s.Values }, sliceCodec(floatCodec)),
)

// metricSeriesCodec is metricSeriesTable's codec, refusing a series whose
// offsets and values differ in length (they are the two halves of its
// points).
var metricSeriesCodec = func() artCodec[MetricSeries] {
	c := metricSeriesTable.codec()
	dec := c.dec
	c.dec = func(raw json.RawMessage) (MetricSeries, error) {
		s, err := dec(raw)
		if err == nil && len(s.OffsetsMS) != len(s.Values) {
			err = atKey("values", fmt.Errorf("%d values for %d offsets_ms: want one value per offset", len(s.Values), len(s.OffsetsMS)))
		}
		return s, err
	}
	return c
}()

var serverMetricsTable = newArtTable(func(m *ServerMetrics) *shape { return &m.shape },
	optionalOf("checks", func(m *ServerMetrics) **ServerChecks { return &m.Checks }, serverChecksTable.codec()),
	fieldOf("dropped_series", func(m *ServerMetrics) *int { return &m.DroppedSeries }, intCodec),
	fieldOf("endpoint", func(m *ServerMetrics) *string { return &m.Endpoint }, stringCodec),
	fieldOf("engine", func(m *ServerMetrics) **string { return &m.Engine }, optStringCodec),
	fieldOf("failed", func(m *ServerMetrics) *int { return &m.Failed }, intCodec),
	fieldOf("interval_ms", func(m *ServerMetrics) *float64 { return &m.IntervalMS }, floatCodec),
	fieldOf("last_error", func(m *ServerMetrics) **string { return &m.LastError }, optStringCodec),
	fieldOf("max_points_per_series", func(m *ServerMetrics) *int { return &m.MaxPointsPerSeries }, intCodec),
	fieldOf("samples", func(m *ServerMetrics) *int { return &m.Samples }, intCodec),
	fieldOf("series", func(m *ServerMetrics) *[]MetricSeries { return &m.Series }, sliceCodec(metricSeriesCodec)),
	fieldOf("skipped_values", func(m *ServerMetrics) *int { return &m.SkippedValues }, intCodec),
	optionalOf("spec_decode", func(m *ServerMetrics) **SpecDecode { return &m.SpecDecode }, specDecodeTable.codec()),
	fieldOf("timeout_ms", func(m *ServerMetrics) *float64 { return &m.TimeoutMS }, floatCodec),
)

var auditTable = newArtTable(func(a *Audit) *shape { return &a.shape },
	fieldOf("cpu_share", func(a *Audit) **float64 { return &a.CPUShare }, optFloatCodec),
	fieldOf("gc_pause_max_ms", func(a *Audit) **float64 { return &a.GCPauseMaxMS }, optFloatCodec),
	fieldOf("gc_pause_total_ms", func(a *Audit) **float64 { return &a.GCPauseTotalMS }, optFloatCodec),
	fieldOf("gc_pauses", func(a *Audit) *int { return &a.GCPauses }, intCodec),
	fieldOf("gomaxprocs", func(a *Audit) *int { return &a.GOMAXPROCS }, intCodec),
	fieldOf("held_wake_lag_max_ms", func(a *Audit) **float64 { return &a.HeldWakeLagMaxMS }, optFloatCodec),
	fieldOf("held_wake_lag_p90_ms", func(a *Audit) **float64 { return &a.HeldWakeLagP90MS }, optFloatCodec),
	fieldOf("pool_wait_max_ms", func(a *Audit) **float64 { return &a.PoolWaitMaxMS }, optFloatCodec),
	fieldOf("pool_waits", func(a *Audit) *int { return &a.PoolWaits }, intCodec),
	fieldOf("reasons", func(a *Audit) *[]string { return &a.Reasons }, sliceCodec(stringCodec)),
	fieldOf("sched_latency_max_ms", func(a *Audit) **float64 { return &a.SchedLatencyMaxMS }, optFloatCodec),
	fieldOf("sched_latency_p99_ms", func(a *Audit) **float64 { return &a.SchedLatencyP99MS }, optFloatCodec),
	fieldOf("sched_samples", func(a *Audit) *int { return &a.SchedSamples }, intCodec),
	fieldOf("send_lag_max_ms", func(a *Audit) **float64 { return &a.SendLagMaxMS }, optFloatCodec),
	fieldOf("send_lag_p99_ms", func(a *Audit) **float64 { return &a.SendLagP99MS }, optFloatCodec),
	fieldOf("verdict", func(a *Audit) *string { return &a.Verdict }, stringCodec),
	fieldOf("wake_lag_max_ms", func(a *Audit) **float64 { return &a.WakeLagMaxMS }, optFloatCodec),
	fieldOf("wake_lag_p50_ms", func(a *Audit) **float64 { return &a.WakeLagP50MS }, optFloatCodec),
	fieldOf("wake_lag_p99_ms", func(a *Audit) **float64 { return &a.WakeLagP99MS }, optFloatCodec),
	fieldOf("wake_samples", func(a *Audit) *int { return &a.WakeSamples }, intCodec),
)

package artifact

// ProbeRequests is "anvil_go.probe_requests": the short requests a run
// sent beside its measured phase at a low rate (capacity.Workload.ProbeRate,
// capacity/PROTOCOL.md#probe_requests), outside the measured requests,
// their rows and metrics: the latency a new user sees while the server is
// busy with the load.
type ProbeRequests struct {
	RateRPS   float64 // "rate_rps": the probe rate, probes per second
	MaxTokens int     // "max_tokens": every probe's max_tokens (1)
	Sent      int     // "sent": probes sent during the phase
	Succeeded int     // "succeeded": probes that streamed a token and ended cleanly
	Failed    int     // "failed": probes that failed
	// Cancelled is "cancelled": probes still in flight when the measured
	// phase ended, cancelled then, neither succeeded nor failed.
	Cancelled int
	// TTFOMS is "ttfo_ms": {p50, p90, p99, max}, nearest rank, of the
	// successful probes' time from their send to their first output token
	// (reasoning or content); nil without one.
	TTFOMS *Quantiles
	// E2EMS is "e2e_ms": the same of their time to the end of the stream.
	E2EMS *Quantiles
	// CompletionTokens is "completion_tokens": the usage completion tokens
	// the probes reported, and Reported is "reported": how many did.
	CompletionTokens int
	Reported         int
	// FirstError is "first_error": the first failed probe's class and
	// message, scrubbed; nil when none failed.
	FirstError *string

	shape shape
}

var probeRequestsTable = newArtTable(func(p *ProbeRequests) *shape { return &p.shape },
	fieldOf("cancelled", func(p *ProbeRequests) *int { return &p.Cancelled }, intCodec),
	fieldOf("completion_tokens", func(p *ProbeRequests) *int { return &p.CompletionTokens }, intCodec),
	fieldOf("e2e_ms", func(p *ProbeRequests) **Quantiles { return &p.E2EMS }, nullableCodec(requestQuantilesTable.codec())),
	fieldOf("failed", func(p *ProbeRequests) *int { return &p.Failed }, intCodec),
	fieldOf("first_error", func(p *ProbeRequests) **string { return &p.FirstError }, optStringCodec),
	fieldOf("max_tokens", func(p *ProbeRequests) *int { return &p.MaxTokens }, intCodec),
	fieldOf("rate_rps", func(p *ProbeRequests) *float64 { return &p.RateRPS }, floatCodec),
	fieldOf("reported", func(p *ProbeRequests) *int { return &p.Reported }, intCodec),
	fieldOf("sent", func(p *ProbeRequests) *int { return &p.Sent }, intCodec),
	fieldOf("succeeded", func(p *ProbeRequests) *int { return &p.Succeeded }, intCodec),
	fieldOf("ttfo_ms", func(p *ProbeRequests) **Quantiles { return &p.TTFOMS }, nullableCodec(requestQuantilesTable.codec())),
)

package artifact

// This file holds "anvil_go.steady": the steady-state window of the
// measured phase, found from the run's own requests (package
// capacity/internal/steady) by the test of capacity/PROTOCOL.md#steady.

// Steady is "anvil_go.steady": the window of the measured phase in which
// the run was at its load and its completions and TTFT had no trend, and
// the headline metrics over that window (capacity/PROTOCOL.md#steady).
type Steady struct {
	// Found is "found": a window passed every test.
	Found bool
	// Reason is "reason": why no window passed (too short a run, the load
	// off its target, a trend, named with its statistic); nil when Found.
	Reason *string
	BinMS  float64 // "bin_ms": the width of the bins the series are counted in
	Bins   int     // "bins": the phase's full bins
	// Load is "load": what the load test compares: "in_flight" (a closed
	// loop, whose window must hold its target of requests in flight),
	// "rate" (due times, an open loop's or a trace's: the window must send
	// at the rate offered) or "none" (sessions whose users think: trends
	// alone).
	Load string
	// Target is "target": the requests in flight a closed loop aims at,
	// or the rate the schedule offered over the window (requests per
	// second); nil for "none" or when no window was tested.
	Target *float64
	// Achieved is "achieved": the window's mean requests in flight, or
	// the rate it sent at; nil when no window was tested.
	Achieved *float64
	// StartMS and EndMS are "start_ms" and "end_ms": the window tested,
	// as offsets of the phase; nil when the run was too short to test one.
	StartMS *float64
	EndMS   *float64
	// CompletionsZ and TTFTZ are "completions_z" and "ttft_z": the
	// Mann-Kendall trend statistics of the window's completions per bin
	// and median TTFT per bin; nil when not tested (too few bins with a
	// value).
	CompletionsZ *float64
	TTFTZ        *float64
	// The window's headline metrics, each nil unless Found: the requests
	// sent in the window (for "rate": due in it) and the latencies of the
	// successful ones, nearest rank, and the window's own throughput.
	//
	// Requests and Succeeded are "requests" and "succeeded": measured
	// requests sent (due) in the window, and of which succeeded.
	Requests  *int
	Succeeded *int
	// TTFTP50MS and TTFTP95MS are "ttft_p50_ms" and "ttft_p95_ms".
	TTFTP50MS *float64
	TTFTP95MS *float64
	TTFOP50MS *float64 // "ttfo_p50_ms": time to the first output of any kind
	TPOTP50MS *float64 // "tpot_p50_ms"
	E2EP50MS  *float64 // "e2e_p50_ms"
	// DecodeTokSP50 and PrefillTokSP50 are "decode_tok_s_p50" and
	// "prefill_tok_s_p50": the per-request rates, medians.
	DecodeTokSP50  *float64
	PrefillTokSP50 *float64
	// ScheduledTTFTP50MS is "scheduled_ttft_p50_ms": TTFT from the
	// scheduled time (queue included), for a "rate" window only.
	ScheduledTTFTP50MS *float64
	// OutputTokS is "output_tok_s": the output tokens generated within
	// the window (each successful request's usage spread evenly over its
	// first output to its end) per second of the window; nil also when a
	// request in it reported no usage.
	OutputTokS *float64
	// CompletionsPerS is "completions_per_s": successful requests that
	// ended within the window per second of it.
	CompletionsPerS *float64

	shape shape
}

var steadyTable = newArtTable(func(s *Steady) *shape { return &s.shape },
	fieldOf("achieved", func(s *Steady) **float64 { return &s.Achieved }, optFloatCodec),
	fieldOf("bin_ms", func(s *Steady) *float64 { return &s.BinMS }, floatCodec),
	fieldOf("bins", func(s *Steady) *int { return &s.Bins }, intCodec),
	fieldOf("completions_per_s", func(s *Steady) **float64 { return &s.CompletionsPerS }, optFloatCodec),
	fieldOf("completions_z", func(s *Steady) **float64 { return &s.CompletionsZ }, optFloatCodec),
	fieldOf("decode_tok_s_p50", func(s *Steady) **float64 { return &s.DecodeTokSP50 }, optFloatCodec),
	fieldOf("e2e_p50_ms", func(s *Steady) **float64 { return &s.E2EP50MS }, optFloatCodec),
	fieldOf("end_ms", func(s *Steady) **float64 { return &s.EndMS }, optFloatCodec),
	fieldOf("found", func(s *Steady) *bool { return &s.Found }, boolCodec),
	fieldOf("load", func(s *Steady) *string { return &s.Load }, stringCodec),
	fieldOf("output_tok_s", func(s *Steady) **float64 { return &s.OutputTokS }, optFloatCodec),
	fieldOf("prefill_tok_s_p50", func(s *Steady) **float64 { return &s.PrefillTokSP50 }, optFloatCodec),
	fieldOf("reason", func(s *Steady) **string { return &s.Reason }, optStringCodec),
	fieldOf("requests", func(s *Steady) **int { return &s.Requests }, optIntCodec),
	fieldOf("scheduled_ttft_p50_ms", func(s *Steady) **float64 { return &s.ScheduledTTFTP50MS }, optFloatCodec),
	fieldOf("start_ms", func(s *Steady) **float64 { return &s.StartMS }, optFloatCodec),
	fieldOf("succeeded", func(s *Steady) **int { return &s.Succeeded }, optIntCodec),
	fieldOf("target", func(s *Steady) **float64 { return &s.Target }, optFloatCodec),
	fieldOf("tpot_p50_ms", func(s *Steady) **float64 { return &s.TPOTP50MS }, optFloatCodec),
	fieldOf("ttfo_p50_ms", func(s *Steady) **float64 { return &s.TTFOP50MS }, optFloatCodec),
	fieldOf("ttft_p50_ms", func(s *Steady) **float64 { return &s.TTFTP50MS }, optFloatCodec),
	fieldOf("ttft_p95_ms", func(s *Steady) **float64 { return &s.TTFTP95MS }, optFloatCodec),
	fieldOf("ttft_z", func(s *Steady) **float64 { return &s.TTFTZ }, optFloatCodec),
)

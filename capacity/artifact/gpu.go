package artifact

// This file holds what a run read of the hardware and the engine's
// speculation: anvil_go.gpu_metrics (the NVIDIA DCGM exporter's series,
// each endpoint a ServerMetrics), anvil_go.energy (energy and cost per
// token, by the rule of capacity/PROTOCOL.md#energy) and
// anvil_go.server_metrics.spec_decode (speculative decoding over the
// measured phase, capacity/PROTOCOL.md#spec_decode).

// Energy is "anvil_go.energy": what the GPUs the run measured spent over
// its measured phase, and per token.
type Energy struct {
	// Method is "method": "counter" (every GPU's energy counter,
	// DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, differenced over the phase),
	// "power" (no counter, or one that did not move over the phase: its
	// power samples integrated by the trapezoid rule) or "mixed"
	// (counters where the GPU had a moving one).
	Method string
	GPUs   int // "gpus": the GPUs counted
	// Joules is "joules": their energy over the phase, summed.
	Joules float64
	// MeanWatts is "mean_watts": Joules over the phase's seconds.
	MeanWatts float64
	// IdleWatts is "idle_watts": their summed power over the idle window
	// measured just before the phase, with nothing in flight, by
	// IdleMethod ("idle_method": "counter", the energy counters' rise over
	// the window, or "power", the mean of the power readings at its two
	// ends, for GPUs whose counter did not move); IdleSeconds is
	// "idle_seconds", the window. IdleJoules is "idle_joules": IdleWatts
	// over the phase. Nil (and "") without an idle window.
	IdleWatts   *float64
	IdleJoules  *float64
	IdleMethod  string
	IdleSeconds float64
	// Seconds is "seconds": the phase, from the sample it starts at to
	// the one it ends at.
	Seconds float64
	// OutputTokens and TotalTokens are "output_tokens" and
	// "total_tokens": the completion tokens, and the prompt and
	// completion tokens, of the phase's requests that reported usage
	// (the probe requests' completion tokens included, the GPUs spent
	// energy on them too; their prompts, which the run does not record,
	// left out).
	OutputTokens int
	TotalTokens  int
	// JoulesPerOutputToken and JoulesPerToken are
	// "joules_per_output_token" and "joules_per_token": Joules over
	// OutputTokens and over TotalTokens; nil without tokens.
	JoulesPerOutputToken *float64
	JoulesPerToken       *float64
	// ActiveJoulesPerOutputToken is "active_joules_per_output_token":
	// Joules less IdleJoules, over OutputTokens: what the load added above
	// the idle GPUs; nil without an idle sample or tokens.
	ActiveJoulesPerOutputToken *float64
	// PricePerGPUHour and PricePerKWh are "price_per_gpu_hour" and
	// "price_per_kwh", as given (capacity.Target); nil when not.
	PricePerGPUHour *float64
	PricePerKWh     *float64
	// CostPerMillionOutputTokens is "cost_per_million_output_tokens": the
	// GPUs' hours over the phase at PricePerGPUHour per million output
	// tokens; EnergyCostPerMillionOutputTokens is
	// "energy_cost_per_million_output_tokens": Joules in kWh at
	// PricePerKWh per million output tokens. Each nil without its price
	// or tokens.
	CostPerMillionOutputTokens       *float64
	EnergyCostPerMillionOutputTokens *float64
	// PerGPU is "per_gpu": each GPU's joules over the phase, keyed
	// "hostname/gpu" (its host as its labels name it, else the
	// endpoint's index, "0/", "1/", ...).
	PerGPU map[string]float64

	shape shape
}

// SpecDecode is "anvil_go.server_metrics.spec_decode": the engine's
// speculative decoding over the measured phase, from its own metrics, and
// the client's view of it.
type SpecDecode struct {
	// Method is "method": "counters" (the engine's counters differenced
	// over the phase: vLLM's vllm:spec_decode_*, llama.cpp's, SGLang's
	// verify calls), "gauges" (the mean over the phase's samples of the
	// engine's own running averages: SGLang's spec_accept_rate and
	// spec_accept_length, which cover its recent batches, not the phase)
	// or "none" (no speculation over the phase; Note says why).
	Method string
	// Drafts, DraftTokens and AcceptedTokens are "drafts",
	// "draft_tokens" and "accepted_tokens": the counters' increases over
	// the phase; nil when the engine has none.
	Drafts         *float64
	DraftTokens    *float64
	AcceptedTokens *float64
	// AcceptanceRate is "acceptance_rate": accepted over draft tokens.
	AcceptanceRate *float64
	// MeanAcceptedLength is "mean_accepted_length": tokens per verified
	// step, the target's own included: 1 + accepted tokens over drafts
	// (SGLang: generation tokens over verify calls).
	MeanAcceptedLength *float64
	// PerPosition is "per_position": the share of drafts whose token at
	// draft position j was accepted (vLLM's per-position counter over
	// drafts); nil when the engine has none.
	PerPosition []float64
	// ClientTokensPerChunk is "client_tokens_per_chunk": the tokens per
	// output chunk the run's streams carried after their first chunk
	// (the sum of completion tokens less one over the sum of output
	// chunks less one, over the successful requests with usage and two
	// chunks or more); nil when none.
	ClientTokensPerChunk *float64
	// Agreement is "agreement": "agree" when ClientTokensPerChunk is
	// within 10% of MeanAcceptedLength (of 1 for method "none"),
	// "disagree" when not, "" when either is missing; Note is "note": why
	// there is no speculation, and what a disagreement means.
	Agreement string
	Note      *string

	shape shape
}

var energyTable = newArtTable(func(e *Energy) *shape { return &e.shape },
	fieldOf("active_joules_per_output_token", func(e *Energy) **float64 { return &e.ActiveJoulesPerOutputToken }, optFloatCodec),
	fieldOf("cost_per_million_output_tokens", func(e *Energy) **float64 { return &e.CostPerMillionOutputTokens }, optFloatCodec),
	fieldOf("energy_cost_per_million_output_tokens", func(e *Energy) **float64 { return &e.EnergyCostPerMillionOutputTokens }, optFloatCodec),
	fieldOf("gpus", func(e *Energy) *int { return &e.GPUs }, intCodec),
	fieldOf("idle_joules", func(e *Energy) **float64 { return &e.IdleJoules }, optFloatCodec),
	fieldOf("idle_method", func(e *Energy) *string { return &e.IdleMethod }, stringCodec),
	fieldOf("idle_seconds", func(e *Energy) *float64 { return &e.IdleSeconds }, floatCodec),
	fieldOf("idle_watts", func(e *Energy) **float64 { return &e.IdleWatts }, optFloatCodec),
	fieldOf("joules", func(e *Energy) *float64 { return &e.Joules }, floatCodec),
	fieldOf("joules_per_output_token", func(e *Energy) **float64 { return &e.JoulesPerOutputToken }, optFloatCodec),
	fieldOf("joules_per_token", func(e *Energy) **float64 { return &e.JoulesPerToken }, optFloatCodec),
	fieldOf("mean_watts", func(e *Energy) *float64 { return &e.MeanWatts }, floatCodec),
	fieldOf("method", func(e *Energy) *string { return &e.Method }, stringCodec),
	fieldOf("output_tokens", func(e *Energy) *int { return &e.OutputTokens }, intCodec),
	fieldOf("per_gpu", func(e *Energy) *map[string]float64 { return &e.PerGPU }, mapCodec(stringMapKey[string](), floatCodec)),
	fieldOf("price_per_gpu_hour", func(e *Energy) **float64 { return &e.PricePerGPUHour }, optFloatCodec),
	fieldOf("price_per_kwh", func(e *Energy) **float64 { return &e.PricePerKWh }, optFloatCodec),
	fieldOf("seconds", func(e *Energy) *float64 { return &e.Seconds }, floatCodec),
	fieldOf("total_tokens", func(e *Energy) *int { return &e.TotalTokens }, intCodec),
)

var specDecodeTable = newArtTable(func(s *SpecDecode) *shape { return &s.shape },
	fieldOf("accepted_tokens", func(s *SpecDecode) **float64 { return &s.AcceptedTokens }, optFloatCodec),
	fieldOf("acceptance_rate", func(s *SpecDecode) **float64 { return &s.AcceptanceRate }, optFloatCodec),
	fieldOf("agreement", func(s *SpecDecode) *string { return &s.Agreement }, stringCodec),
	fieldOf("client_tokens_per_chunk", func(s *SpecDecode) **float64 { return &s.ClientTokensPerChunk }, optFloatCodec),
	fieldOf("draft_tokens", func(s *SpecDecode) **float64 { return &s.DraftTokens }, optFloatCodec),
	fieldOf("drafts", func(s *SpecDecode) **float64 { return &s.Drafts }, optFloatCodec),
	fieldOf("mean_accepted_length", func(s *SpecDecode) **float64 { return &s.MeanAcceptedLength }, optFloatCodec),
	fieldOf("method", func(s *SpecDecode) *string { return &s.Method }, stringCodec),
	fieldOf("note", func(s *SpecDecode) **string { return &s.Note }, optStringCodec),
	fieldOf("per_position", func(s *SpecDecode) *[]float64 { return &s.PerPosition }, nullableSlice(floatCodec)),
)

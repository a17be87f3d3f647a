package artifact

// CompletionTokens is the sum of usage.completion_tokens over the measured
// requests whose responses reported it: the timing rows' output_tokens and
// the usage of failures whose response still carried it; responses counts
// them. The server-metrics cross-check compares it with the server's
// generation-token counter (PROTOCOL.md#server_metrics).
func (r *Report) CompletionTokens() (tokens, responses int) {
	for i := range r.RequestTimings {
		if n := r.RequestTimings[i].OutputTokens; n != nil {
			tokens += *n
			responses++
		}
	}
	for i := range r.Failures {
		if md := r.Failures[i].ResponseMetadata; md != nil && md.Usage != nil && md.Usage.CompletionTokens != nil {
			tokens += *md.Usage.CompletionTokens
			responses++
		}
	}
	return tokens, responses
}

// PromptTokensReported is the sum of usage.prompt_tokens over the same
// responses as CompletionTokens: the timing rows' prompt_tokens and the
// usage of failures whose response still carried it. Energy per total
// token divides by it plus CompletionTokens (PROTOCOL.md#energy).
func (r *Report) PromptTokensReported() int {
	tokens := 0
	for i := range r.RequestTimings {
		if n := r.RequestTimings[i].PromptTokens; n != nil {
			tokens += *n
		}
	}
	for i := range r.Failures {
		if md := r.Failures[i].ResponseMetadata; md != nil && md.Usage != nil && md.Usage.PromptTokens != nil {
			tokens += *md.Usage.PromptTokens
		}
	}
	return tokens
}

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

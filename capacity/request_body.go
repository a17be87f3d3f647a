package capacity

import (
	"fmt"

	"github.com/anvilbench/anvil/capacity/internal/client"
)

// defaultTemperature is the temperature sent when Workload.Temperature is
// nil (client.DefaultTemperature: the reference tool's 0.0).
const defaultTemperature = client.DefaultTemperature

// requestOf is what every request of a run against t (resolved, its model
// known) with the resolved workload w asks for, in no API's words
// (capacity/PROTOCOL.md#wire-protocol): the model, max_tokens, the
// sampling, the thinking control (ThinkingMode or ReasoningEffort, never
// both) and Target.ExtraBody (whose keys never collide with these:
// validation refuses the reserved ones).
func requestOf(t Target, w Workload) client.Request {
	r := client.Request{Model: t.Model, MaxTokens: w.MaxTokens, Temperature: w.Temperature, TopP: w.TopP,
		ReasoningEffort: string(w.ReasoningEffort), EncodingFormat: w.EncodingFormat, Extra: make(map[string]any, len(t.ExtraBody))}
	for k, v := range t.ExtraBody {
		r.Extra[k] = v
	}
	switch w.ThinkingMode {
	case thinkingEnabled:
		r.Thinking = new(true)
	case thinkingDisabled:
		r.Thinking = new(false)
	}
	return r
}

// newRequestEncoder encodes the fixed part of every request body of a run
// in its dialect d.
func newRequestEncoder(d client.Dialect, t Target, w Workload) (*client.Encoder, error) {
	r := requestOf(t, w)
	enc, err := client.NewEncoder(d, &r)
	if err != nil {
		return nil, fmt.Errorf("%w: Target.ExtraBody does not encode as JSON: %w", ErrInvalidConfig, err)
	}
	return enc, nil
}

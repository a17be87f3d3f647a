package capacity

import (
	"encoding/json"
	"fmt"

	"github.com/anvilbench/anvil/capacity/internal/client"
)

// defaultTemperature is the temperature sent when Workload.Temperature is
// nil: 0.0, as the reference tool's capacity client sends on every request,
// so that both tools' requests (and greedy outputs) are the same.
const defaultTemperature = 0.0

// defaultTemperatureJSON is defaultTemperature written as the reference
// writes it (Python's 0.0, where Go's encoder would write 0).
const defaultTemperatureJSON = json.Number("0.0")

// bodyFields returns the request fields other than messages: model,
// max_tokens, stream, stream_options, temperature (defaultTemperature unless
// set), top_p when set, the
// thinking control (chat_template_kwargs or reasoning_effort, never both)
// and Target.ExtraBody (whose keys never collide with these: validation
// refuses the reserved ones).
func bodyFields(t Target, w Workload) map[string]any {
	f := make(map[string]any, 8+len(t.ExtraBody))
	for k, v := range t.ExtraBody {
		f[k] = v
	}
	f["model"] = t.Model
	f["max_tokens"] = w.MaxTokens
	f["stream"] = true
	f["stream_options"] = map[string]bool{"include_usage": true}
	if w.Temperature != nil {
		f["temperature"] = *w.Temperature
	} else {
		f["temperature"] = defaultTemperatureJSON
	}
	if w.TopP != nil {
		f["top_p"] = *w.TopP
	}
	switch {
	case w.ReasoningEffort != "":
		f["reasoning_effort"] = string(w.ReasoningEffort)
	case w.ThinkingMode == thinkingEnabled:
		f["chat_template_kwargs"] = map[string]bool{"enable_thinking": true}
	case w.ThinkingMode == thinkingDisabled:
		f["chat_template_kwargs"] = map[string]bool{"enable_thinking": false}
	}
	return f
}

// newRequestEncoder encodes the fixed part of every request body of a run
// (capacity/PROTOCOL.md section 4).
func newRequestEncoder(t Target, w Workload) (*client.Encoder, error) {
	enc, err := client.NewEncoder(bodyFields(t, w))
	if err != nil {
		return nil, fmt.Errorf("%w: Target.ExtraBody does not encode as JSON: %w", ErrInvalidConfig, err)
	}
	return enc, nil
}

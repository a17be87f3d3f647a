package capacity

import (
	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
)

// The APIs a Target speaks (Target.API, artifact.APIs): chat completions,
// the default, and the others of capacity/PROTOCOL.md#apis.
const (
	apiChat        = artifact.APIChat
	apiResponses   = "responses"
	apiMessages    = "messages"
	apiCompletions = "completions"
	apiEmbeddings  = "embeddings"
)

// dialectOf is the client's dialect of an API name of a resolved Target
// ("" is chat).
func dialectOf(api string) client.Dialect {
	switch api {
	case apiResponses:
		return client.Responses
	case apiMessages:
		return client.Messages
	case apiCompletions:
		return client.Completions
	case apiEmbeddings:
		return client.Embeddings
	}
	return client.ChatCompletions
}

// apiOf is the API of a resolved Target, "chat" when empty.
func (t Target) apiOf() string {
	if t.API == "" {
		return apiChat
	}
	return t.API
}

// reservedBodyFieldsOf are the request fields each API's body writes from
// the Target and the Workload: Target.ExtraBody may not override them
// (reservedBodyFields are chat's).
func reservedBodyFieldsOf(api string) map[string]string {
	switch api {
	case apiResponses:
		return map[string]string{"model": "Target.Model", "input": "the prompt plan", "instructions": "the prompt plan",
			"stream": "the streaming client", "max_output_tokens": "Workload.MaxTokens", "temperature": "Workload.Temperature",
			"top_p": "Workload.TopP", "reasoning": "Workload.ThinkingMode and Workload.ReasoningEffort"}
	case apiMessages:
		return map[string]string{"model": "Target.Model", "messages": "the prompt plan", "system": "the prompt plan",
			"stream": "the streaming client", "max_tokens": "Workload.MaxTokens", "temperature": "Workload.Temperature",
			"top_p": "Workload.TopP", "thinking": "Workload.ThinkingMode"}
	case apiCompletions:
		return map[string]string{"model": "Target.Model", "prompt": "the prompt plan", "stream": "the streaming client",
			"stream_options": "the streaming client", "max_tokens": "Workload.MaxTokens", "temperature": "Workload.Temperature",
			"top_p": "Workload.TopP"}
	case apiEmbeddings:
		return map[string]string{"model": "Target.Model", "input": "the prompt plan", "encoding_format": "Workload.EncodingFormat"}
	}
	return reservedBodyFields
}

// checkAPI checks what a resolved workload w asks of the API of t (resolved):
// the Messages API has no reasoning effort; a raw completions prompt has no
// chat template, so no thinking control.
func checkAPI(t Target, w Workload) error {
	var v validator
	switch t.apiOf() {
	case apiMessages:
		if w.ReasoningEffort != "" {
			v.add("Workload.ReasoningEffort", w.ReasoningEffort, "has no field in the Messages API (Target.API %q): switch thinking with Workload.ThinkingMode instead", apiMessages)
		}
	case apiCompletions:
		if w.ReasoningEffort != "" {
			v.add("Workload.ReasoningEffort", w.ReasoningEffort, "has no field in the completions API (Target.API %q): a raw prompt has no chat template", apiCompletions)
		}
		if w.ThinkingMode == thinkingEnabled || w.ThinkingMode == thinkingDisabled {
			v.add("Workload.ThinkingMode", w.ThinkingMode, "has no field in the completions API (Target.API %q): a raw prompt has no chat template", apiCompletions)
		}
	case apiEmbeddings:
		const why = "embeddings generate no text (Target.API %q)"
		if w.ReasoningEffort != "" {
			v.add("Workload.ReasoningEffort", w.ReasoningEffort, why, apiEmbeddings)
		}
		if w.ThinkingMode == thinkingEnabled || w.ThinkingMode == thinkingDisabled {
			v.add("Workload.ThinkingMode", w.ThinkingMode, why, apiEmbeddings)
		}
		if w.RequestCanaries {
			v.add("Workload.RequestCanaries", true, why+": there is no answer to begin with a marker", apiEmbeddings)
		}
		if w.ResponseWords > 0 {
			v.add("Workload.ResponseWords", w.ResponseWords, why+": there are no words to count", apiEmbeddings)
		}
	}
	if w.EncodingFormat != "" && t.apiOf() != apiEmbeddings {
		v.add("Workload.EncodingFormat", w.EncodingFormat, "is an embeddings field: set Target.API %q, or leave it empty", apiEmbeddings)
	}
	return v.err()
}

// absentTimingsEmbeddings is anvil_go.run.absent_timings of an embeddings
// run.
const absentTimingsEmbeddings = "embeddings generate no token: the rows have no time_to_first_output_ms, ttft_ms, generation_ms " +
	"or visible_generation_ms and null tpot_ms, decode_tok_s and effective_prefill_tok_s; e2e_ms is each answer's latency"

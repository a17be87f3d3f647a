package capacity

import (
	"strings"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
)

// apiOf is the API of a resolved Target, "chat" when empty.
func (t Target) apiOf() string {
	if t.API == "" {
		return artifact.APIChat
	}
	return t.API
}

// requestOwners names what of a Target and a Workload writes each field
// of a client.Request that client.WrittenFields names, as errors say it.
var requestOwners = map[string]string{
	"Model": "Target.Model", "prompt": "the prompt plan", "stream": "the streaming client",
	"MaxTokens": "Workload.MaxTokens", "Temperature": "Workload.Temperature", "TopP": "Workload.TopP",
	"Thinking": "Workload.ThinkingMode", "ReasoningEffort": "Workload.ReasoningEffort", "EncodingFormat": "Workload.EncodingFormat",
}

// reservedBy returns what writes body field k of the API api, if
// anything does: Target.ExtraBody and a Source's Request.Body may not set
// such a field, or the recorded workload would not be what was sent.
func reservedBy(api, k string) (string, bool) {
	by, ok := client.WrittenFields(api)[k]
	owners := make([]string, len(by))
	for i, f := range by {
		owners[i] = requestOwners[f]
	}
	return strings.Join(owners, " and "), ok
}

// checkAPI checks what a resolved workload w asks of the API of t (resolved):
// the Messages API has no reasoning effort; a raw completions prompt has no
// chat template, so no thinking control.
func checkAPI(t Target, w Workload) error {
	var v validator
	switch t.apiOf() {
	case client.APIMessages:
		if w.ReasoningEffort != "" {
			v.add("Workload.ReasoningEffort", w.ReasoningEffort, "has no field in the Messages API (Target.API %q): switch thinking with Workload.ThinkingMode instead", client.APIMessages)
		}
	case client.APICompletions:
		if w.ReasoningEffort != "" {
			v.add("Workload.ReasoningEffort", w.ReasoningEffort, "has no field in the completions API (Target.API %q): a raw prompt has no chat template", client.APICompletions)
		}
		if w.ThinkingMode == thinkingEnabled || w.ThinkingMode == thinkingDisabled {
			v.add("Workload.ThinkingMode", w.ThinkingMode, "has no field in the completions API (Target.API %q): a raw prompt has no chat template", client.APICompletions)
		}
	case client.APIEmbeddings:
		const why = "embeddings generate no text (Target.API %q)"
		if w.ReasoningEffort != "" {
			v.add("Workload.ReasoningEffort", w.ReasoningEffort, why, client.APIEmbeddings)
		}
		if w.ThinkingMode == thinkingEnabled || w.ThinkingMode == thinkingDisabled {
			v.add("Workload.ThinkingMode", w.ThinkingMode, why, client.APIEmbeddings)
		}
		if w.RequestCanaries {
			v.add("Workload.RequestCanaries", true, why+": there is no answer to begin with a marker", client.APIEmbeddings)
		}
		if w.ResponseWords > 0 {
			v.add("Workload.ResponseWords", w.ResponseWords, why+": there are no words to count", client.APIEmbeddings)
		}
	}
	if w.EncodingFormat != "" && t.apiOf() != client.APIEmbeddings {
		v.add("Workload.EncodingFormat", w.EncodingFormat, "is an embeddings field: set Target.API %q, or leave it empty", client.APIEmbeddings)
	}
	return v.err()
}

// absentTimingsEmbeddings is anvil_go.run.absent_timings of an embeddings
// run.
const absentTimingsEmbeddings = "embeddings generate no token: the rows have no time_to_first_output_ms, ttft_ms, generation_ms " +
	"or visible_generation_ms and null tpot_ms, decode_tok_s and effective_prefill_tok_s; e2e_ms is each answer's latency"

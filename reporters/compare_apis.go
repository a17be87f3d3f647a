package reporters

import (
	"fmt"
	"slices"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// The sentences of Comparison.ByDefinition: what differs between one
// workload's runs over two APIs because the APIs define it so
// (capacity/PROTOCOL.md#comparing-apis).
const (
	byDefinitionFraming = "framing: each API wraps the tokens in events of its own (chat's chunks; Responses' response.created, " +
		"response.in_progress and item events; Messages' message_start, content blocks and message_stop; completions' text chunks), " +
		"so the events per answer and the time to the first event differ; TTFT and TTFO are to the first visible and the first " +
		"output token in both, so they differ only by what that framing costs"
	byDefinitionRawPrompt = "prompt: completions sends the planned text without the chat template, so its prompt tokens, " +
		"prefill and prefill rate count fewer tokens; a raw prompt has no reasoning channel, so its TTFO is its TTFT, every " +
		"output token is visible and its measurement_protocol is capacity-v3 whatever the other run's"
	byDefinitionMessagesUsage = "usage: Messages reports input_tokens without the tokens read from the cache (added back to make " +
		"the prompt tokens) and no total_tokens"
	byDefinitionResponsesUsage = "usage: Responses reports it only in the event that ends the answer (response.completed or " +
		"response.incomplete), and a limit that stops the answer as response.incomplete rather than a finish reason"
)

// byDefinition returns the sentences of two different APIs' comparison,
// or an error when one is embeddings.
func byDefinition(apis [2]string) ([]string, error) {
	for _, a := range apis {
		if !slices.Contains(artifact.APIs(), a) {
			return nil, fmt.Errorf("reporters: compare across APIs: unknown API %s", Printable(a))
		}
	}
	if slices.Contains(apis[:], "embeddings") {
		return nil, fmt.Errorf("reporters: compare across APIs: %s and %s measure different things: an embeddings run has no output tokens, so it compares only with embeddings",
			apis[0], apis[1])
	}
	notes := []string{byDefinitionFraming}
	if slices.Contains(apis[:], "completions") {
		notes = append(notes, byDefinitionRawPrompt)
	}
	if slices.Contains(apis[:], "messages") {
		notes = append(notes, byDefinitionMessagesUsage)
	}
	if slices.Contains(apis[:], "responses") {
		notes = append(notes, byDefinitionResponsesUsage)
	}
	return notes, nil
}

package capacity

import (
	"fmt"

	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/prompt"
)

// The prompts of a plan are written by its prompt.Layout
// (capacity/PROTOCOL.md#prompts); these are the plan's requests' own.

// AppendPrompt appends the prompt of measured request index to dst and
// returns the extended buffer: prompt.Layout.Append of the request's
// character budget B, int(context * 3.0) for its planned context (in
// shared mode without canaries or response words, byte-identical to the
// reference tool's prompt), or with exact sizing (Workload.PromptSizing)
// the budget the sizing found for it.
func (p *plan) AppendPrompt(dst []byte, index int) ([]byte, error) {
	if index < 0 || index >= len(p.Contexts) {
		return dst, fmt.Errorf("capacity: request index %d: must be in 0..%d", index, len(p.Contexts)-1)
	}
	return p.layout.Append(dst, index, index, p.Contexts[index], p.promptChars(index), prompt.Measured)
}

// promptChars is the character budget B of measured request index: the
// exact sizing's when there is one, else int(context * 3.0).
func (p *plan) promptChars(index int) int {
	if p.chars != nil {
		return p.chars[index]
	}
	return prompt.Chars(min(p.Contexts[index], p.PromptBudget))
}

// appendCalibrationPrompt appends the calibration prompt standing for
// measured request index, of chars characters.
func (p *plan) appendCalibrationPrompt(dst []byte, index, chars int) ([]byte, error) {
	return p.layout.Append(dst, index, index, p.Contexts[index], chars, prompt.Calibration)
}

// AppendWarmupPrompt appends the prompt of warm-up request k (0-based),
// sized like measured request k mod Len. Its filler and closing instruction
// differ from every measured prompt's, and it carries no canary, so warm-up
// responses are never mistaken for measured ones; in shared mode it warms
// the shared prefix like any request.
func (p *plan) AppendWarmupPrompt(dst []byte, k int) ([]byte, error) {
	if k < 0 || len(p.Contexts) == 0 {
		return dst, fmt.Errorf("capacity: warm-up request %d: must be >= 0 in a non-empty plan", k)
	}
	return p.layout.Append(dst, k, p.Workload.Requests+k, p.Contexts[k%len(p.Contexts)], p.promptChars(k%len(p.Contexts)), prompt.Warmup)
}

// measuredBody is the streamed request body of measured request index.
func (p *plan) measuredBody(enc *client.Encoder, index int) (*prompt.Body, error) {
	if index < 0 || index >= len(p.Contexts) {
		return nil, fmt.Errorf("capacity: request index %d: must be in 0..%d", index, len(p.Contexts)-1)
	}
	return p.layout.Body(enc, index, index, p.Contexts[index], p.promptChars(index), prompt.Measured)
}

// warmupBody is the streamed request body of warm-up request k.
func (p *plan) warmupBody(enc *client.Encoder, k int) (*prompt.Body, error) {
	if k < 0 || len(p.Contexts) == 0 {
		return nil, fmt.Errorf("capacity: warm-up request %d: must be >= 0 in a non-empty plan", k)
	}
	return p.layout.Body(enc, k, p.Workload.Requests+k, p.Contexts[k%len(p.Contexts)], p.promptChars(k%len(p.Contexts)), prompt.Warmup)
}

package capacity

import (
	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/prompt"
)

// promptSizingOf is anvil_go.prompt_sizing of a run but for its plan
// check (artifact.PromptSizing.CheckPlan, capacity/PROTOCOL.md#plan-check,
// run once anvil_go.requests is written): the method and what exact
// sizing learned. chars_per_token is the ratio the prompts were built
// with: for exact sizing the characters of all measured prompts over
// their planned tokens.
func promptSizingOf(p *plan, results []result) *artifact.PromptSizing {
	ps := &artifact.PromptSizing{Method: string(promptSizingReference), CharsPerToken: prompt.CharsPerToken}
	if p.sizing.exact {
		ps.Method = string(promptSizingExact)
		source := p.sizing.source
		ps.Source = &source
		if p.sizing.tokenizePath != "" {
			path := p.sizing.tokenizePath
			ps.TokenizePath = &path
		}
		ps.CalibrationRequests = p.sizing.calibrationRequests
		ps.TemplateTokens = p.sizing.template
		chars, tokens := 0, 0
		for _, res := range results {
			chars += res.promptChars
			tokens += p.Contexts[res.Index]
		}
		ps.CharsPerToken = float64(chars) / float64(max(tokens, 1))
		if len(results) == 0 && p.source == nil {
			ps.CharsPerToken = p.exactCharsPerToken()
		}
	}
	return ps
}

package reporters

import (
	"fmt"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// promptPlanWarning is what the run said about prompts counted off their
// plan (anvil_go.prompt_sizing.warning, capacity/PROTOCOL.md#anvil-go):
// how far off, and what to do. It is "" when the artifact records none.
// The text is the artifact's, made Printable.
func promptPlanWarning(r *artifact.Report) string {
	if r == nil || r.AnvilGo == nil || r.AnvilGo.PromptSizing == nil || r.AnvilGo.PromptSizing.Warning == nil {
		return ""
	}
	return Printable(*r.AnvilGo.PromptSizing.Warning)
}

// unsizableNote says how many requests exact sizing could not size for
// their plan (anvil_go.prompt_sizing.unsizable_requests): planned below
// what the chat template and their closing instruction alone count, they
// were sent at that least prompt and left out of the plan check. It is ""
// when there were none.
func unsizableNote(r *artifact.Report) string {
	if r == nil || r.AnvilGo == nil || r.AnvilGo.PromptSizing == nil || r.AnvilGo.PromptSizing.UnsizableRequests == 0 {
		return ""
	}
	ps := r.AnvilGo.PromptSizing
	s := fmt.Sprintf("%d requests were planned below what their least prompt counts", ps.UnsizableRequests)
	if ps.TemplateTokens != nil {
		s += fmt.Sprintf(" (the chat template alone counts %d tokens)", *ps.TemplateTokens)
	}
	return s + ": sent at that least prompt, left out of the plan check"
}

// contextWindowNote says which window the run planned for and where it
// came from (anvil_go.context_window), with the advertised window and the
// note naming a disagreement when there is one; "" when the artifact does
// not record it.
func contextWindowNote(r *artifact.Report) string {
	if r == nil || r.AnvilGo == nil || r.AnvilGo.ContextWindow == nil {
		return ""
	}
	cw := r.AnvilGo.ContextWindow
	s := fmt.Sprintf("context window %d tokens from %s", cw.Tokens, Printable(cw.Source))
	if cw.Advertised != nil && cw.AdvertisedSource != nil && *cw.AdvertisedSource != cw.Source {
		s += fmt.Sprintf(", the server advertises %d (%s)", *cw.Advertised, Printable(*cw.AdvertisedSource))
	}
	if cw.TruncationWindow != cw.Tokens {
		s += fmt.Sprintf(", truncation checked at %d", cw.TruncationWindow)
	}
	if cw.Note != nil {
		s += ": " + Printable(*cw.Note)
	}
	return s
}

// noUsageNote says how many successful requests reported no
// usage.prompt_tokens (capacity/PROTOCOL.md#finish-reasons: such a stream
// is a success): the server never counted their prompts, so neither the
// truncation check nor the prompt-plan comparison covers them, and they
// carry no token rate. A run whose successes all lack usage is otherwise
// indistinguishable in the log from one that checked every prompt. It is
// "" when every successful request reported usage.
func noUsageNote(r *artifact.Report) string {
	n := 0
	for i := range r.RequestTimings {
		if r.RequestTimings[i].PromptTokens == nil {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d successful requests reported no usage.prompt_tokens: their prompts were never counted, so no truncation check or prompt-plan comparison covers them, and they have no token rates",
		n, len(r.RequestTimings))
}

// windowDisagreement is contextWindowNote when the window planned for is
// not simply the one the server advertised (a declared window, another
// advertised one, a truncation window of its own, a note); "" otherwise.
func windowDisagreement(r *artifact.Report) string {
	if r == nil || r.AnvilGo == nil || r.AnvilGo.ContextWindow == nil {
		return ""
	}
	cw := r.AnvilGo.ContextWindow
	plain := cw.Note == nil && cw.TruncationWindow == cw.Tokens &&
		(cw.Advertised == nil || *cw.Advertised == cw.Tokens)
	if plain {
		return ""
	}
	return contextWindowNote(r)
}

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

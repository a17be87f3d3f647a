package capacity

// PromptSizing says how a run sizes its prompts to their planned contexts
// (capacity/PROTOCOL.md#exact-token-sizing).
type PromptSizing string

const (
	// PromptSizingReference sizes every prompt at PromptCharsPerToken
	// characters per planned token: byte-identical to the reference tool's
	// prompts, counted by each server's tokenizer as it happens to count
	// them (the default).
	PromptSizingReference PromptSizing = "reference"
	// PromptSizingExact sizes every prompt so that the server counts its
	// planned context: from the server's POST /tokenize when it has one
	// (exactly), else from unmeasured calibration requests (within
	// MaxCalibratedSizingError).
	PromptSizingExact PromptSizing = "exact"
)

package chunk

import "github.com/anvilbench/anvil/capacity/internal/jsonpick"

// The object levels and member names the decoder knows, and the
// allocation-free lookup of a member name.

// level is an object whose members are decoded.
type level uint8

const (
	levelTop     level = iota // the payload
	levelChoice               // an element of choices
	levelDelta                // choices[i].delta
	levelUsage                // usage
	levelDetails              // usage.prompt_tokens_details
)

// The decoded members, one bit each so that an object records those it
// has seen (a second one sends the payload to encoding/json).
const (
	fChoices = 1 << iota
	fUsage
	fError
	fDelta
	fFinish
	fContent
	fRole
	fReasoningContent
	fReasoning
	fPrompt
	fCompletion
	fTotal
	fDetails
	fCached
	fObject
	fMessage
	fTimings
)

// lookup returns the member a name without escapes, non-ASCII bytes or
// upper-case letters selects at lv, or 0 for a member that is not decoded.
func lookup(lv level, name []byte) int {
	if len(name) > maxNameLen || nameLens(lv)&(1<<len(name)) == 0 {
		return 0 // no decoded name at lv has this length
	}
	switch lv {
	case levelTop:
		switch string(name) {
		case "choices":
			return fChoices
		case "usage":
			return fUsage
		case "error":
			return fError
		case "object":
			return fObject
		case "message":
			return fMessage
		case "timings":
			return fTimings
		}
	case levelChoice:
		switch string(name) {
		case "delta":
			return fDelta
		case "finish_reason":
			return fFinish
		}
	case levelDelta:
		switch string(name) {
		case "content":
			return fContent
		case "role":
			return fRole
		case "reasoning_content":
			return fReasoningContent
		case "reasoning":
			return fReasoning
		}
	case levelUsage:
		switch string(name) {
		case "prompt_tokens":
			return fPrompt
		case "completion_tokens":
			return fCompletion
		case "total_tokens":
			return fTotal
		case "prompt_tokens_details":
			return fDetails
		}
	case levelDetails:
		if string(name) == "cached_tokens" {
			return fCached
		}
	}
	return 0
}

// maxNameLen bounds the decoded names (prompt_tokens_details is the
// longest); a longer name cannot fold to one of them.
const maxNameLen = 24

// nameLens returns the lengths of the decoded names at lv, bit n for n
// bytes: most names that are not decoded are told apart by length alone.
func nameLens(lv level) uint32 {
	switch lv {
	case levelTop:
		return 1<<len("choices") | 1<<len("usage") | 1<<len("error") | 1<<len("object") | 1<<len("message") | 1<<len("timings")
	case levelChoice:
		return 1<<len("delta") | 1<<len("finish_reason")
	case levelDelta:
		return 1<<len("content") | 1<<len("role") | 1<<len("reasoning_content") | 1<<len("reasoning")
	case levelUsage:
		return 1<<len("prompt_tokens") | 1<<len("completion_tokens") | 1<<len("total_tokens") | 1<<len("prompt_tokens_details")
	}
	return 1 << len("cached_tokens")
}

// lookupFolded resolves a name with upper-case ASCII letters: encoding/json
// would match it to a decoded member when it folds to that member's name,
// which the fast path leaves to encoding/json (jsonpick.Fail); otherwise it
// is a member that is not decoded.
func lookupFolded(lv level, name []byte) int {
	if len(name) > maxNameLen {
		return 0
	}
	var low [maxNameLen]byte
	for i, c := range name {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		low[i] = c
	}
	if lookup(lv, low[:len(name)]) != 0 {
		return jsonpick.Fail
	}
	return 0
}

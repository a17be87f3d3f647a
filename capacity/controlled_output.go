package capacity

import (
	"strings"
	"unicode"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// controlledOutputWord is the word a response-words request asks for,
// repeated Workload.ResponseWords times.
const controlledOutputWord = "code"

// checkControlledOutput checks the controlled-output contract on the
// bounded capture of a response. The visible content is split into words at
// white space; a word counts as a code word only if it is exactly "code"
// (lowercase, no punctuation), every other word is extra. When marker is
// not empty (request canaries on) a leading word that is the marker,
// possibly followed by punctuation (as in "ANVIL_REQ_1_00000,"), is the
// canary's and is not counted. Adherence is exact when the code words equal
// requested and there is no extra word; it is unobservable (nil) when the
// capture is incomplete. Under policyObserve the check always passes (it
// records); under policyStrict it passes only on exact adherence, so a
// truncated capture fails closed.
func checkControlledOutput(visible string, complete bool, requested int, policy ControlledOutputPolicy, marker string) *artifact.ControlledOutputCheck {
	c := &artifact.ControlledOutputCheck{RequestedWords: requested, CaptureComplete: complete, Policy: string(policy)}
	first := true
	for w := range strings.FieldsSeq(visible) {
		if first {
			first = false
			if isMarkerWord(w, marker) {
				continue
			}
		}
		if w == controlledOutputWord {
			c.ObservedCodeWords++
		} else {
			c.ObservedExtraWords++
		}
	}
	if complete {
		exact := c.ObservedCodeWords == requested && c.ObservedExtraWords == 0
		c.ExactAdherence = &exact
	}
	switch policy {
	case policyStrict:
		c.Passed = c.ExactAdherence != nil && *c.ExactAdherence
	default:
		c.Passed = true
	}
	return c
}

// isMarkerWord reports whether word is marker, possibly followed by
// punctuation or symbols only.
func isMarkerWord(word, marker string) bool {
	rest, ok := strings.CutPrefix(word, marker)
	if marker == "" || !ok {
		return false
	}
	for _, r := range rest {
		if !unicode.IsPunct(r) && !unicode.IsSymbol(r) {
			return false
		}
	}
	return true
}

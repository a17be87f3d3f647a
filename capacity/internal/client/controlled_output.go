package client

import (
	"strings"
	"unicode"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// ControlledOutputWord is the word a response-words request asks for,
// repeated Workload.ResponseWords times.
const ControlledOutputWord = "code"

// The controlled-output policies (Workload.ControlledOutputPolicy):
// PolicyObserve records adherence without failing the request,
// PolicyStrict fails every response that is not exactly the requested
// words, including responses whose capture was truncated.
const (
	PolicyObserve = "observe"
	PolicyStrict  = "strict"
)

// checkControlledOutput checks the controlled-output contract on the
// bounded capture of a response. The visible content is split into words at
// white space; a word counts as a code word only if it is exactly "code"
// (lowercase, no punctuation), every other word is extra. When marker is
// not empty (request canaries on) a leading word that is the marker,
// possibly followed by punctuation (as in "ANVIL_REQ_1_00000,"), is the
// canary's and is not counted. Adherence is exact when the code words equal
// requested and there is no extra word; it is unobservable (nil) when the
// capture is incomplete. Under PolicyObserve the check always passes (it
// records); under PolicyStrict it passes only on exact adherence, so a
// truncated capture fails closed.
func checkControlledOutput(visible string, complete bool, requested int, policy, marker string) *artifact.ControlledOutputCheck {
	c := &artifact.ControlledOutputCheck{RequestedWords: requested, CaptureComplete: complete, Policy: policy}
	first := true
	for w := range strings.FieldsSeq(visible) {
		if first {
			first = false
			if isMarkerWord(w, marker) {
				continue
			}
		}
		if w == ControlledOutputWord {
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
	case PolicyStrict:
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

package fakeserver

import (
	"math/rand/v2"
	"strings"
)

type tokenKind uint8

const (
	kindReasoning tokenKind = iota
	kindContent
)

// token is one simulated output token.
type token struct {
	kind tokenKind
	text string
}

// thinkOpen and thinkClose enclose the reasoning Dialect.ThinkTags sends
// inside the content.
const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// endlessText is the token faultEndless and ignore_eos decode after the
// planned answer.
const endlessText = " more"

// markerPieceLen is how many characters of a marker make one token.
const markerPieceLen = 3

var reasoningWords = strings.Fields(`Okay the user wants a one line summary of the code above
it defines many numbered helper functions and each returns compute of its index
so I should say that briefly and begin with the marker if one is asked
let me check the instruction again then answer`)

var answerWords = strings.Fields(`The code defines numbered helper functions that each
return compute of an index in a routine specialist context`)

// outputPlan is the whole planned output of one request. It is immutable once
// built, so the engine and the handler read it without locks.
type outputPlan struct {
	tokens    []token
	reasoning int    // reasoning tokens in tokens
	finish    string // "stop" or "length"
	endless   bool   // decode past tokens forever (faultEndless)
	marker    string // the marker the answer begins with, "" if none
}

// at returns token i; past the plan an endless output repeats endlessText.
func (p *outputPlan) at(i int) token {
	if i < len(p.tokens) {
		return p.tokens[i]
	}
	return token{kindContent, endlessText}
}

// planInput is what planOutput needs from the request and the config.
type planInput struct {
	in        instructions
	reasoning int  // reasoning tokens drawn for this request
	answer    int  // free-answer tokens drawn for this request
	budget    int  // max completion tokens
	limited   bool // the request set max_tokens (or max_completion_tokens)
	window    int  // the completion tokens the context window leaves
	ignoreEOS bool
	fault     Fault
}

// planOutput builds the tokens a good model would answer, then applies the
// request's disobedience fault and the token budget.
func planOutput(pi planInput, rng *rand.Rand) *outputPlan {
	p := &outputPlan{finish: "stop"}
	r := pi.reasoning
	if pi.fault == faultReasoningOnly {
		r = max(r, 16)
	}
	for i := range r {
		w := reasoningWords[rng.IntN(len(reasoningWords))]
		if i > 0 {
			w = " " + w
		}
		p.tokens = append(p.tokens, token{kindReasoning, w})
	}
	p.reasoning = r
	if pi.fault != faultReasoningOnly {
		p.tokens = append(p.tokens, answerTokens(pi, p)...)
	}
	if pi.ignoreEOS {
		for len(p.tokens) < pi.budget {
			p.tokens = append(p.tokens, token{kindContent, endlessText})
		}
	}
	if pi.fault == faultIgnoreMaxTokens && pi.limited {
		n := min(2*pi.budget, pi.window)
		for len(p.tokens) < n {
			p.tokens = append(p.tokens, token{kindContent, endlessText})
		}
		p.tokens = p.tokens[:n]
		p.endless = false
		p.reasoning = min(p.reasoning, len(p.tokens))
		return p
	}
	if len(p.tokens) > pi.budget {
		p.tokens = p.tokens[:pi.budget]
		p.finish = "length"
	} else if pi.ignoreEOS {
		p.finish = "length"
	}
	p.endless = pi.fault == faultEndless
	p.reasoning = min(p.reasoning, len(p.tokens))
	return p
}

func answerTokens(pi planInput, p *outputPlan) []token {
	var ts []token
	add := func(s string) { ts = append(ts, token{kindContent, s}) }
	word := func(w string) {
		if len(ts) > 0 {
			w = " " + w
		}
		add(w)
	}
	switch {
	case pi.in.marker == "" || pi.fault == faultOmitMarker:
	case pi.fault == faultForeignMarker:
		p.marker = pi.in.foreignMarker()
	default:
		p.marker = pi.in.marker
	}
	if p.marker != "" && pi.fault == faultLateMarker {
		add(lateMarkerPrefix + " ")
	}
	for i := 0; i < len(p.marker); i += markerPieceLen {
		add(p.marker[i:min(i+markerPieceLen, len(p.marker))])
	}
	if pi.in.words > 0 {
		for range min(pi.in.words, pi.budget+1) { // the budget cuts the rest
			word("code")
		}
	} else {
		n := max(pi.answer-len(ts), 1)
		for i := range n {
			word(answerWords[i%len(answerWords)])
		}
	}
	if pi.fault == faultExtraWords {
		for _, w := range strings.Fields(extraWords) {
			word(w)
		}
	}
	return ts
}

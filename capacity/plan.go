package capacity

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"regexp"

	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/contextdraw"
	"github.com/anvilbench/anvil/capacity/internal/prompt"
)

// plan is the deterministic part of a run, resolved completely before any
// request is sent: the planned context and the canary marker of every
// request index, and what the prompts are made of. Thread scheduling can
// never change which contexts are attempted. A plan is immutable and safe
// for concurrent use; each worker builds its prompts into its own buffer
// with AppendPrompt.
type plan struct {
	// Workload is the resolved workload the plan was made for.
	Workload Workload
	// MaxModelLen is the model's context length used (explicit or probed).
	MaxModelLen int
	// Margin is the number of tokens kept free below MaxModelLen.
	Margin int
	// PromptBudget is MaxModelLen - MaxTokens - Margin: the largest context
	// a prompt is sized for.
	PromptBudget int
	// Contexts holds the planned context of each measured request index,
	// clamped to PromptBudget. Its length is the number of requests the run
	// may dispatch (Workload.Requests, or fewer in duration mode, see
	// Workload.Duration).
	Contexts []int
	// Nonce is the per-run nonce of unique-mode prefixes ("" when unused).
	Nonce string
	// Warmups is the most warm-up requests the run may send: Workload.Warmup,
	// or for a warm-up by time or until steady as many as the bounds allow
	// (warmupRule).
	Warmups int

	// layout writes the prompts (package internal/prompt).
	layout *prompt.Layout
	// chars holds the character budget of each measured request index
	// found by exact sizing; nil for reference sizing.
	chars []int
	// least holds, for an index exact sizing could not size for its
	// planned context, what its least prompt counts (its closing
	// instruction and the chat template alone count more); 0 otherwise,
	// nil for reference sizing.
	least []int
	// sizing is how the prompts were sized (anvil_go.prompt_sizing).
	sizing sizingRecord
	// source is the Source a SizedSource returned from exact sizing; nil
	// otherwise.
	source Source
}

// A nonce is written into prompts: 1 to maxNonceLen characters of
// nonceChars.
const (
	maxNonceLen = 64
	nonceChars  = "A-Za-z0-9_-"
)

// noncePattern bounds what a nonce may hold.
var noncePattern = regexp.MustCompile(fmt.Sprintf(`^[%s]{1,%d}$`, nonceChars, maxNonceLen))

// newNonce returns a fresh per-run nonce for unique-mode prompts: 16
// lowercase hex digits from crypto/rand.
func newNonce() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("capacity: reading a random nonce: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// promptBudget returns maxModelLen - maxTokens - margin, the usable prompt
// size in tokens, or an error wrapping ErrInvalidConfig when it is not
// positive.
func promptBudget(maxModelLen, maxTokens, margin int) (int, error) {
	b := maxModelLen - maxTokens - margin
	if maxModelLen <= 0 {
		return 0, badField("Target.MaxModelLen", maxModelLen,
			fmt.Sprintf("must be in 1..%d once resolved (explicit or probed from /models)", maxContextTokens))
	}
	if b <= 0 {
		return 0, badField("Target.MaxModelLen", maxModelLen,
			fmt.Sprintf("leaves a prompt budget of %d tokens after MaxTokens %d and Margin %d; must leave at least 1", b, maxTokens, margin))
	}
	return b, nil
}

// newPlan resolves w (see Workload.Resolved) and plans its requests for a
// model of maxModelLen tokens with margin tokens kept free (the
// effective margin of a resolved Target, 0 for None). Fixed contexts skip
// the draw; sampled contexts come from contextdraw.Sample(w.Seed, w.Requests).
// Every context is clamped to the prompt budget. The sum of the planned contexts may not exceed
// maxPlannedPromptTokens; in duration mode the plan instead stops at the
// longest prefix that fits. nonce is required in unique mode unless
// w.OmitUniqueNonce is set (see NewNonce) and ignored otherwise. newPlan
// fails when any planned prompt could not hold its closing instruction.
func newPlan(w Workload, maxModelLen, margin int, nonce string) (*plan, error) {
	w, err := w.Resolved()
	if err != nil {
		return nil, err
	}
	if margin < 0 || margin > maxMargin {
		return nil, badField("Target.Margin", margin, fmt.Sprintf("must be in 0..%d once resolved", maxMargin))
	}
	if maxModelLen > maxContextTokens {
		return nil, badField("Target.MaxModelLen", maxModelLen, fmt.Sprintf("must be in 1..%d", maxContextTokens))
	}
	budget, err := promptBudget(maxModelLen, w.MaxTokens, margin)
	if err != nil {
		return nil, err
	}
	p := &plan{Workload: w, MaxModelLen: maxModelLen, Margin: margin, PromptBudget: budget}
	if w.PromptCacheMode == promptCacheUnique && !w.OmitUniqueNonce {
		if !noncePattern.MatchString(nonce) {
			return nil, fmt.Errorf("%w: unique-mode nonce %q must be 1 to %d characters of [%s] (see NewNonce)", ErrInvalidConfig, nonce, maxNonceLen, nonceChars)
		}
		p.Nonce = nonce
	}

	if w.ContextTokens > 0 {
		p.Contexts = make([]int, w.Requests)
		for i := range p.Contexts {
			p.Contexts[i] = min(w.ContextTokens, budget)
		}
	} else {
		p.Contexts = contextdraw.Sample(w.Seed, w.Requests)
		for i, c := range p.Contexts {
			p.Contexts[i] = min(c, budget)
		}
	}
	p.Warmups = w.Warmup
	if w.timedWarmup() {
		p.Warmups = maxRequests
	}
	if w.Source != nil {
		// A Source plans the measured prompts: the synthetic contexts
		// are the warm-up's alone (seamsOf clears the rest).
		if err := p.capWarmup(); err != nil {
			return nil, err
		}
	}
	total := 0
	for i, c := range p.Contexts {
		if w.Source != nil {
			break
		}
		total += c
		if total > maxPlannedPromptTokens {
			if w.Duration > 0 {
				p.Contexts = p.Contexts[:i:i]
				break
			}
			return nil, badField("Workload.Requests", w.Requests,
				fmt.Sprintf("plans more than %d prompt tokens in all (the first %d requests fit)", maxPlannedPromptTokens, i))
		}
	}

	if p.layout, err = prompt.New(prompt.Config{Canaries: w.RequestCanaries, Seed: w.Seed, ResponseWords: w.ResponseWords,
		Unique: w.PromptCacheMode == promptCacheUnique, Nonce: p.Nonce, PrefixChars: prompt.Chars(w.sharedPrefixTokens())}); err != nil {
		return nil, err
	}
	if len(p.Contexts) == 0 {
		return p, nil
	}
	for i, c := range p.Contexts {
		if w.Source != nil {
			break // the source's prompts are built as it describes them
		}
		if err := p.checkTail(i, c, false); err != nil {
			return nil, err
		}
	}
	for k := range p.Warmups {
		if err := p.checkTail(k, p.Contexts[k%len(p.Contexts)], true); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// capWarmup holds the warm-up's planned contexts of a run with a Source
// to maxPlannedPromptTokens: warm-up request k sends Contexts[k mod n]. A
// warm-up by time stops at the count that fits.
func (p *plan) capWarmup() error {
	total := 0
	for k := range p.Warmups {
		if len(p.Contexts) == 0 {
			return nil
		}
		total += p.Contexts[k%len(p.Contexts)]
		if total > maxPlannedPromptTokens && p.Workload.timedWarmup() {
			p.Warmups = k
			return nil
		}
		if total > maxPlannedPromptTokens {
			return badField("Workload.Warmup", p.Workload.Warmup,
				fmt.Sprintf("plans more than %d prompt tokens in all (the first %d warm-up requests fit)", maxPlannedPromptTokens, k))
		}
	}
	return nil
}

// Len returns the number of measured requests the plan holds.
func (p *plan) Len() int { return len(p.Contexts) }

// Marker returns the canary marker of request index, or "" when request
// canaries are off.
func (p *plan) Marker(index int) string {
	if !p.Workload.RequestCanaries {
		return ""
	}
	return client.CanaryMarker(p.Workload.Seed, index)
}

// ContextDistribution counts the planned contexts: context -> requests.
// It is the artifact's context_distribution of a run that attempts the
// whole plan; a run that stops early (Workload.MaxFailures, Duration)
// records the contexts of the requests it attempted.
func (p *plan) ContextDistribution() map[int]int {
	d := make(map[int]int)
	for _, c := range p.Contexts {
		d[c]++
	}
	return d
}

// PlannedPromptTokens returns the sum of the planned contexts.
func (p *plan) PlannedPromptTokens() int {
	total := 0
	for _, c := range p.Contexts {
		total += c
	}
	return total
}

// checkTail fails when a prompt of context tokens cannot hold the closing
// instruction of request index. The error names the setting that made the
// context that small: the prompt budget (Target.MaxModelLen, with MaxTokens
// and Margin) when the context was clamped to it, else ContextTokens.
func (p *plan) checkTail(index, context int, warmup bool) error {
	chars, tail := prompt.Chars(context), p.tailLen(index, warmup)
	if chars >= tail {
		return nil
	}
	need := minTokensFor(tail)
	what := "request"
	if warmup {
		what = "warm-up request"
	}
	if w := p.Workload; w.ContextTokens == 0 || w.ContextTokens > p.PromptBudget {
		return badField("Target.MaxModelLen", p.MaxModelLen,
			fmt.Sprintf("leaves a prompt budget of %d tokens (%d characters) after MaxTokens %d and Margin %d; %s %d needs at least %d tokens for its %d-character closing instruction",
				p.PromptBudget, chars, w.MaxTokens, p.Margin, what, index, need, tail))
	}
	return badField("Workload.ContextTokens", context,
		fmt.Sprintf("must be at least %d: a prompt of %d characters cannot hold the %d-character closing instruction of %s %d", need, chars, tail, what, index))
}

// minTokensFor is the smallest context whose prompt holds chars characters.
func minTokensFor(chars int) int {
	n := int(math.Ceil(float64(chars) / prompt.CharsPerToken))
	for prompt.Chars(n) < chars {
		n++
	}
	return n
}

// tailLen is the length of the closing instruction of request index.
func (p *plan) tailLen(index int, warmup bool) int {
	var buf [512]byte
	return len(p.layout.AppendTail(buf[:0], index, warmup))
}

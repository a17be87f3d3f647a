package capacity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
)

// PromptSizing says how a run sizes its prompts to their planned contexts
// (capacity/PROTOCOL.md#exact-token-sizing): "reference" (the default)
// sizes every prompt at 3.0 characters per planned token, byte-identical
// to the reference tool's prompts, counted by each server's tokenizer as
// it happens to count them; "exact" sizes every prompt so that the server
// counts its planned context, from the server's POST /tokenize when it
// has one (exactly), else from unmeasured calibration requests (within
// 0.2 % of the representative contexts).
type PromptSizing string

const (
	// promptSizingReference sizes every prompt at promptCharsPerToken
	// characters per planned token: byte-identical to the reference tool's
	// prompts, counted by each server's tokenizer as it happens to count
	// them (the default).
	promptSizingReference PromptSizing = "reference"
	// promptSizingExact sizes every prompt so that the server counts its
	// planned context: from the server's POST /tokenize when it has one
	// (exactly), else from unmeasured calibration requests (within 0.2 %
	// of the representative contexts; see calibration.go).
	promptSizingExact PromptSizing = "exact"
)

// errPromptSizing is wrapped by the error Run returns when exact prompt
// sizing could not learn the server's tokenizer: no /tokenize endpoint
// and no calibration request that reported usage.prompt_tokens, a
// calibration request that failed, counts outside the bounds of what
// sizing believes (maxCharsPerToken, minCharsPerToken; the message names
// the counts), a plan beyond the window the server serves, or calibration
// that did not reach its tolerance in calibrationSteps requests.
var errPromptSizing = errors.New("capacity: exact prompt sizing failed")

// Sources of exact sizing, recorded as anvil_go.prompt_sizing.source.
const (
	// sizingSourceTokenize: every prompt was counted with the server's
	// tokenizer endpoint and its filler adjusted until the count was the
	// planned context.
	sizingSourceTokenize = "tokenize"
	// sizingSourceCalibration: the characters per token were learned from
	// calibration requests' usage.prompt_tokens.
	sizingSourceCalibration = "calibration"
)

// maxSizingCounts bounds the /tokenize counts spent on one prompt. The
// search converges in two or three (the first guess uses the ratio of the
// previous prompt); the bound only stops a tokenizer whose counts do not
// grow with the text.
const maxSizingCounts = 16

// sizingRecord is how a run's prompts were sized: anvil_go.prompt_sizing
// without the per-request error, which the results give.
type sizingRecord struct {
	source              string // "" for reference sizing
	tokenizePath        string // "" unless source is tokenize
	calibrationRequests int
}

// sizePrompts sizes every prompt of p for the server behind cl (exact
// sizing), before any warm-up or measured request: it finds the server's
// tokenizer endpoint, or else sends calibration requests, and sets
// p.chars. t is the resolved target with its model; window is the window
// the server serves (Discovery.TruncationWindow), at and near which no
// count is believed.
func sizePrompts(ctx context.Context, p *plan, t Target, cl *client.Client, window int) error {
	if p.Len() == 0 {
		return nil
	}
	one := p.Workload
	one.MaxTokens = 1
	enc, err := newRequestEncoder(t, one)
	if err != nil {
		return err
	}
	s := &sizer{plan: p, cl: cl, enc: enc, minChars: make([]int, p.Len())}
	warmTail := 0
	for k := range p.Warmups {
		warmTail = max(warmTail, p.tailLen(k, true))
	}
	for i := range s.minChars {
		s.minChars[i] = max(p.tailLen(i, false), warmTail)
	}
	tok, err := discoverTokenizer(ctx, cl, t, p.Workload)
	if err != nil {
		return err
	}
	if tok != nil {
		err = s.byTokenize(ctx, tok, window)
	} else {
		err = s.byCalibration(ctx, window)
	}
	if err != nil {
		return err
	}
	p.chars = s.chars
	p.sizing = s.record
	return nil
}

// sizer holds the state of one exact sizing.
type sizer struct {
	plan     *plan
	cl       *client.Client  // the run's client
	enc      *client.Encoder // the calibration requests' bodies: max_tokens 1
	minChars []int           // the least budget of each index: its closing instructions fit
	chars    []int
	record   sizingRecord
	prompt   []byte
	body     client.Buffer
}

// representatives returns the request indexes calibration measures: those
// of the smallest, the median and the largest distinct planned context.
func (s *sizer) representatives() []int {
	first := map[int]int{} // context -> first index planned with it
	var contexts []int
	for i, c := range s.plan.Contexts {
		if _, ok := first[c]; !ok {
			first[c] = i
			contexts = append(contexts, c)
		}
	}
	slices.Sort(contexts)
	picks := []int{contexts[0]}
	if n := len(contexts); n > 2 {
		picks = append(picks, contexts[n/2])
	}
	if n := len(contexts); n > 1 {
		picks = append(picks, contexts[n-1])
	}
	out := make([]int, len(picks))
	for k, c := range picks {
		out[k] = first[c]
	}
	return out
}

// calibrate sends the calibration prompt of index with chars characters
// (max_tokens 1, unmeasured) and returns its exchange; the error is only
// for a prompt that cannot be built.
func (s *sizer) calibrate(ctx context.Context, index, chars int) (*client.Exchange, error) {
	var err error
	s.prompt, err = s.plan.appendCalibrationPrompt(s.prompt[:0], index, max(chars, s.minChars[index]))
	if err != nil {
		return nil, err
	}
	s.body.Set(s.enc.AppendBody(s.body.Reset(), s.prompt))
	ex := &client.Exchange{Index: index, Unmeasured: true}
	s.cl.Send(ctx, &s.body, ex)
	s.record.calibrationRequests++
	if class, _ := ex.Failure(); class != "" && ctx.Err() != nil {
		return nil, fmt.Errorf("%w: %w", errPromptSizing, context.Cause(ctx))
	}
	return ex, nil
}

// byTokenize sizes every prompt exactly with the server's tokenizer. The
// prompt of the smallest planned context is first sized with the endpoint
// alone (so the calibration request fits the window whatever the
// tokenizer's ratio), then one calibration request learns offset =
// usage.prompt_tokens - the endpoint's count of the same prompt (0 when
// the endpoint applies the chat template as the server does), and each
// request's budget is searched until the endpoint counts its planned
// context minus offset (see search).
func (s *sizer) byTokenize(ctx context.Context, tok *tokenizer, window int) error {
	s.record.source, s.record.tokenizePath = sizingSourceTokenize, tok.path
	first := s.representatives()[0]
	c := s.plan.Contexts[first]
	ratio := min(max(tok.probeRatio, minCharsPerToken), maxCharsPerToken)
	chars, err := s.search(ctx, tok, first, c, ratio)
	if err != nil {
		return err
	}
	k := &calibrator{s: s, window: window}
	m, err := k.measure(ctx, first, chars)
	if err != nil {
		return err
	}
	counted, err := tok.count(ctx, s.prompt) // the calibration prompt just sent
	if err != nil {
		return err
	}
	if m.cut {
		return fmt.Errorf("%w: the server counted %d tokens, at its window of %d, for a calibration prompt its tokenizer (%s) counts %d: it cut the prompt, or counts differently; plan for a smaller context",
			errPromptSizing, m.tokens, k.window, tok.path, counted)
	}
	offset := m.tokens - counted
	if abs(offset) > max(c/2, 256) {
		return fmt.Errorf("%w: the server counted %d tokens (usage.prompt_tokens) for a %d-character calibration prompt its tokenizer (%s) counts %d: the two disagree by more than half the planned %d",
			errPromptSizing, m.tokens, m.chars, tok.path, counted, c)
	}
	if err := checkPoint(nil, sizePoint{m.chars, m.tokens}, fmt.Sprintf("calibration of request %d", first)); err != nil {
		return err
	}
	ratio = float64(len(s.prompt)) / float64(max(counted, 1))
	s.chars = make([]int, s.plan.Len())
	for i, c := range s.plan.Contexts {
		b, err := s.search(ctx, tok, i, c-offset, ratio)
		if err != nil {
			return err
		}
		s.chars[i] = b
		ratio = float64(b) / float64(max(c-offset, 1))
	}
	return s.checkBounds(fmt.Sprintf("%s counts and an offset of %d tokens", tok.path, offset))
}

// search finds the budget of request index whose prompt the endpoint
// counts as target tokens: a secant step from the ratio's guess, kept
// inside the bracket of budgets known to count too few and too many, and
// halving the bracket when a step would leave it. It ends on the exact
// count, on a bracket with no budget left between its ends, or after
// maxSizingCounts counts, with the budget whose count was closest (the
// smaller budget on a tie).
func (s *sizer) search(ctx context.Context, tok *tokenizer, index, target int, ratio float64) (int, error) {
	lo, hi := s.minChars[index]-1, math.MaxInt // counts below target at lo, above at hi
	bound := maxPromptChars(s.plan.Contexts[index])
	b := min(max(int(math.Round(ratio*float64(target))), s.minChars[index]), bound)
	best, bestErr := b, math.MaxInt
	for range maxSizingCounts {
		var err error
		s.prompt, err = s.plan.appendPrompt(s.prompt[:0], index, index, s.plan.Contexts[index], b, promptMeasured)
		if err != nil {
			return 0, err
		}
		n, err := tok.count(ctx, s.prompt)
		if err != nil {
			return 0, err
		}
		if float64(len(s.prompt)) > maxCharsPerToken*float64(max(n, 1)) && n < target {
			return 0, fmt.Errorf("%w: POST %s counted %d tokens for a %d-character prompt (above the plausible %g characters per token): not a count of the prompt",
				errPromptSizing, tok.path, n, len(s.prompt), maxCharsPerToken)
		}
		if d := abs(n - target); d < bestErr || d == bestErr && b < best {
			best, bestErr = b, d
		}
		switch {
		case n == target:
			return b, nil
		case n < target:
			lo = b
		default:
			hi = b
			if b == s.minChars[index] {
				return b, nil // the closing instruction alone counts more
			}
		}
		if hi-lo <= 1 || b == bound && n < target {
			break
		}
		next := b + int(math.Round(float64(target-n)*float64(b)/float64(max(n, 1))))
		if next <= lo || next >= hi {
			if hi == math.MaxInt {
				next = min(lo+max(lo-s.minChars[index], 1), bound) // grow until the count passes the target
			} else {
				next = lo + (hi-lo)/2
			}
		}
		b = next
	}
	return best, nil
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// exactCharsPerToken is the ratio exact sizing built the plan's prompts
// with: the characters of all its prompts over their planned tokens.
func (p *plan) exactCharsPerToken() float64 {
	chars, tokens := 0, 0
	for i, c := range p.Contexts {
		chars += p.chars[i]
		tokens += c
	}
	return float64(chars) / float64(max(tokens, 1))
}

// promptSizingOf is anvil_go.prompt_sizing of a run: the method, what
// exact sizing learned, the largest relative error of the server's counts
// (usage.prompt_tokens, or an over-window refusal's) against the planned
// contexts, and the plan check (checkPlan).
// chars_per_token is the ratio the prompts were built with: for exact
// sizing the characters of all measured prompts over their planned tokens,
// or the ratio a SizedSource was given.
func promptSizingOf(p *plan, results []result) *artifact.PromptSizing {
	ps := &artifact.PromptSizing{Method: string(promptSizingReference), CharsPerToken: promptCharsPerToken}
	if p.chars != nil {
		ps.Method = string(promptSizingExact)
		source := p.sizing.source
		ps.Source = &source
		if p.sizing.tokenizePath != "" {
			path := p.sizing.tokenizePath
			ps.TokenizePath = &path
		}
		ps.CalibrationRequests = p.sizing.calibrationRequests
		ps.CharsPerToken = p.sourceCharsPerToken
		if ps.CharsPerToken == 0 {
			ps.CharsPerToken = p.exactCharsPerToken()
		}
	}
	for _, res := range results {
		if res.promptTokens == nil {
			continue
		}
		planned := p.Contexts[res.index]
		e := math.Abs(float64(*res.promptTokens-planned)) / float64(planned)
		if ps.MaxRelativeError == nil || e > *ps.MaxRelativeError {
			ps.MaxRelativeError = &e
		}
	}
	checkPlan(ps, p, results)
	return ps
}

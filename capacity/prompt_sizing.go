package capacity

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/anvilbench/anvil/capacity/artifact"
)

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

// ErrPromptSizing is wrapped by the error Run returns when exact prompt
// sizing could not learn the server's tokenizer: no /tokenize endpoint
// and no calibration request that reported usage.prompt_tokens.
var ErrPromptSizing = errors.New("capacity: exact prompt sizing failed")

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

// MaxCalibrationRequests is the most unmeasured calibration requests exact
// sizing sends: two (a first guess and its correction) for each of at most
// three representative planned contexts (the smallest, the median and the
// largest). With /tokenize it sends one, which learns how the endpoint's
// count relates to usage.prompt_tokens (the chat template's tokens when
// the endpoint counts bare text).
const MaxCalibrationRequests = 6

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
// p.chars. t is the resolved target with its model.
func sizePrompts(ctx context.Context, p *plan, t Target, cl *client) error {
	if p.Len() == 0 {
		return nil
	}
	one := p.Workload
	one.MaxTokens = 1
	enc, err := newRequestEncoder(t, one)
	if err != nil {
		return err
	}
	cal := *cl
	cal.enc = enc
	s := &sizer{plan: p, cal: &cal, minChars: make([]int, p.Len())}
	warmTail := 0
	for k := range p.Workload.Warmup {
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
		err = s.byTokenize(ctx, tok)
	} else {
		err = s.byCalibration(ctx)
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
	cal      *client // the run's client, sending max_tokens 1
	minChars []int   // the least budget of each index: its closing instructions fit
	chars    []int
	record   sizingRecord
	prompt   []byte
	body     bodyBuffer
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
// (max_tokens 1, unmeasured) and returns the server's usage.prompt_tokens.
func (s *sizer) calibrate(ctx context.Context, index, chars int) (int, error) {
	var err error
	s.prompt, err = s.plan.appendCalibrationPrompt(s.prompt[:0], index, max(chars, s.minChars[index]))
	if err != nil {
		return 0, err
	}
	s.body.buf = s.cal.enc.appendBody(s.body.reset(), s.prompt)
	ex := exchange{unmeasured: true}
	s.cal.send(ctx, &s.body, &ex)
	s.record.calibrationRequests++
	if ex.class != "" {
		return 0, fmt.Errorf("%w: calibration request for request %d (%d characters): %s: %s", ErrPromptSizing, index, len(s.prompt), ex.class, ex.message)
	}
	u := ex.stream.usage.prompt
	if !u.ok || u.v <= 0 {
		return 0, fmt.Errorf("%w: the server has no tokenizer endpoint and its calibration response reported no usage.prompt_tokens: use PromptSizingReference", ErrPromptSizing)
	}
	return int(u.v), nil
}

// sizePoint is one observation: a prompt of chars characters counted as
// tokens.
type sizePoint struct{ chars, tokens int }

// byCalibration sizes every prompt from calibration requests. For each
// representative context c it sends the calibration prompt at the current
// ratio's guess, then (unless that landed within 0.1 %) once more at the
// guess corrected by the observed ratio. Each request's budget is then
// read off the piecewise-linear curve through the observed (characters,
// tokens) points (see charsFor), which follows the chat template's fixed
// tokens and a ratio that changes with the prompt's size.
func (s *sizer) byCalibration(ctx context.Context) error {
	ratio := PromptCharsPerToken
	var pts []sizePoint
	for _, i := range s.representatives() {
		c := s.plan.Contexts[i]
		guess := int(math.Round(ratio * float64(c)))
		n, err := s.calibrate(ctx, i, guess)
		if err != nil {
			return err
		}
		pts = append(pts, sizePoint{max(guess, s.minChars[i]), n})
		ratio = float64(guess) / float64(n)
		if math.Abs(float64(n-c)) > float64(c)/1000 {
			guess = int(math.Round(float64(guess) + float64(c-n)*ratio))
			if n, err = s.calibrate(ctx, i, guess); err != nil {
				return err
			}
			pts = append(pts, sizePoint{max(guess, s.minChars[i]), n})
			ratio = float64(guess) / float64(n)
		}
	}
	s.chars = make([]int, s.plan.Len())
	for i, c := range s.plan.Contexts {
		s.chars[i] = max(charsFor(pts, c), s.minChars[i])
	}
	s.record.source = sizingSourceCalibration
	return nil
}

// charsFor inverts the observed points: the characters at which the
// piecewise-linear curve through pts (by tokens) reaches tokens, the end
// segments extended beyond the points, and through the origin with a
// single distinct count.
func charsFor(pts []sizePoint, tokens int) int {
	pts = slices.Clone(pts)
	slices.SortFunc(pts, func(a, b sizePoint) int {
		return cmp.Or(cmp.Compare(a.tokens, b.tokens), cmp.Compare(a.chars, b.chars))
	})
	pts = slices.CompactFunc(pts, func(a, b sizePoint) bool { return a.tokens == b.tokens })
	if len(pts) == 1 {
		return int(math.Round(float64(pts[0].chars) * float64(tokens) / float64(pts[0].tokens)))
	}
	k, _ := slices.BinarySearchFunc(pts, tokens, func(p sizePoint, t int) int { return cmp.Compare(p.tokens, t) })
	k = min(max(k, 1), len(pts)-1) // the segment [k-1, k]
	a, b := pts[k-1], pts[k]
	slope := float64(b.chars-a.chars) / float64(b.tokens-a.tokens)
	return int(math.Round(float64(a.chars) + float64(tokens-a.tokens)*slope))
}

// byTokenize sizes every prompt exactly with the server's tokenizer: one
// calibration request learns offset = usage.prompt_tokens - the endpoint's
// count of the same prompt (0 when the endpoint applies the chat template
// as the server does), then each request's budget is searched until the
// endpoint counts its planned context minus offset (see search).
func (s *sizer) byTokenize(ctx context.Context, tok *tokenizer) error {
	s.record.source, s.record.tokenizePath = sizingSourceTokenize, tok.path
	reps := s.representatives()
	first := reps[0]
	chars := promptChars(s.plan.Contexts[first])
	usage, err := s.calibrate(ctx, first, chars)
	if err != nil {
		return err
	}
	counted, err := tok.count(ctx, s.prompt) // the calibration prompt just sent
	if err != nil {
		return err
	}
	offset := usage - counted
	ratio := float64(len(s.prompt)) / float64(max(counted, 1))
	s.chars = make([]int, s.plan.Len())
	for i, c := range s.plan.Contexts {
		b, err := s.search(ctx, tok, i, c-offset, ratio)
		if err != nil {
			return err
		}
		s.chars[i] = b
		ratio = float64(b) / float64(max(c-offset, 1))
	}
	return nil
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
	b := max(int(math.Round(ratio*float64(target))), s.minChars[index])
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
		if hi-lo <= 1 {
			break
		}
		next := b + int(math.Round(float64(target-n)*float64(b)/float64(max(n, 1))))
		if next <= lo || next >= hi {
			if hi == math.MaxInt {
				next = lo + max(lo-s.minChars[index], 1) // grow until the count passes the target
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

// promptSizingOf is anvil_go.prompt_sizing of a run: the method, what
// exact sizing learned, and the largest relative error of the server's
// counts (usage.prompt_tokens) against the planned contexts.
// chars_per_token is the ratio the prompts were built with: for exact
// sizing the characters of all measured prompts over their planned tokens.
func promptSizingOf(p *plan, results []result) *artifact.PromptSizing {
	ps := &artifact.PromptSizing{Method: string(PromptSizingReference), CharsPerToken: PromptCharsPerToken}
	if p.chars != nil {
		ps.Method = string(PromptSizingExact)
		source := p.sizing.source
		ps.Source = &source
		if p.sizing.tokenizePath != "" {
			path := p.sizing.tokenizePath
			ps.TokenizePath = &path
		}
		ps.CalibrationRequests = p.sizing.calibrationRequests
		chars, tokens := 0, 0
		for i, c := range p.Contexts {
			chars += p.chars[i]
			tokens += c
		}
		ps.CharsPerToken = float64(chars) / float64(tokens)
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
	return ps
}

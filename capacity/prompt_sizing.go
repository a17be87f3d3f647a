package capacity

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/anvilbench/anvil/capacity/internal/budget"
	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/prompt"
	"github.com/anvilbench/anvil/capacity/internal/tokenize"
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
	// promptSizingReference sizes every prompt at prompt.CharsPerToken
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
// sizing believes (budget.MaxCharsPerToken, budget.MinCharsPerToken; the
// message names the counts), a plan beyond the window the server serves,
// or calibration that did not reach its tolerance in calibrationSteps
// requests. A count of the tokenizer's wraps it as tokenize.ErrSizing.
var errPromptSizing = tokenize.ErrSizing

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

// sizingRecord is how a run's prompts were sized: anvil_go.prompt_sizing
// without the per-request error, which the results give.
type sizingRecord struct {
	exact               bool
	source              string // "" for reference sizing
	tokenizePath        string // "" unless source is tokenize
	calibrationRequests int
	// template is the tokens the chat template adds to a request of one
	// user message, as exact sizing learned it; nil when it did not.
	template *int
}

// sizePrompts sizes the prompts of p for the server behind cl (exact
// sizing), before any warm-up or measured request: it finds the server's
// tokenizer endpoint, or else sends calibration requests, and sets
// p.chars for the plan's own prompts (every measured request's, or with
// a Source the warm-up's alone) and, for a SizedSource, p.source to the
// source it sized. t is the resolved target with its model; window is
// the window the server serves (Discovery.TruncationWindow), at and near
// which no count is believed.
func sizePrompts(ctx context.Context, p *plan, t Target, cl *client.Client, window int) error {
	if _, sized := p.Workload.Source.(SizedSource); p.Len() == 0 && !sized {
		return nil
	}
	one := p.Workload
	one.MaxTokens = 1
	enc, err := newRequestEncoder(cl.Dialect(), t, one)
	if err != nil {
		return err
	}
	s := &sizer{plan: p, cl: cl, enc: enc, window: window, minChars: make([]int, p.Len()),
		bodies: &sourceBodies{dialect: cl.Dialect(), target: t, w: one, plan: p}}
	warmTail := 0
	for k := range p.Warmups {
		warmTail = max(warmTail, p.tailLen(k, true))
	}
	for i := range s.minChars {
		s.minChars[i] = max(p.tailLen(i, false), warmTail)
	}
	if s.tok, err = tokenize.Discover(ctx, cl, tokenizeConfig(t, p.Workload)); err != nil {
		return err
	}
	s.record.exact = true
	s.record.source = sizingSourceCalibration
	if s.tok != nil {
		s.record.source, s.record.tokenizePath = sizingSourceTokenize, s.tok.Path()
	}
	s.chars = make([]int, p.Len())
	s.plan.least = make([]int, p.Len())
	for i, c := range p.Contexts {
		s.chars[i] = prompt.Chars(c) // the reference's, for an index no request sends
	}
	if ix := s.planIndexes(); len(ix) > 0 {
		if s.tok != nil {
			err = s.byTokenize(ctx, ix)
		} else {
			err = s.byCalibration(ctx, ix)
		}
		if err != nil {
			return err
		}
	}
	p.chars = s.chars
	if src, ok := p.Workload.Source.(SizedSource); ok {
		if p.source, err = src.SizedBy(ctx, &serverSizer{s: s}); err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("%w: %w", errPromptSizing, context.Cause(ctx))
			}
			return fmt.Errorf("%w: the source's prompts: %w", errPromptSizing, err)
		}
		if p.source == nil {
			return fmt.Errorf("%w: the source's SizedBy returned no Source", errPromptSizing)
		}
	}
	if s.templateKnown {
		t0 := s.templates[0]
		s.record.template = &t0
	}
	p.sizing = s.record
	return nil
}

// sizer holds the state of one exact sizing.
type sizer struct {
	plan     *plan
	cl       *client.Client      // the run's client
	enc      *client.Encoder     // the calibration requests' bodies: max_tokens 1
	bodies   *sourceBodies       // the bodies of calibration requests of several messages
	tok      *tokenize.Tokenizer // nil: calibration
	window   int                 // the server's window (the truncation window), lowered by a refusal's n_ctx
	minChars []int               // the least budget of each index: its closing instructions fit
	chars    []int
	record   sizingRecord
	prompt   []byte
	body     client.Buffer

	// What the Sizer learned (source_sizing.go).
	offset        int  // tokenize: the server's count less the endpoint's
	offsetKnown   bool // offset was learned
	templates     [2]int
	templateKnown bool         // templates[0] was learned
	exchangeKnown bool         // templates[1] was learned
	probe         budget.Point // the template probe's text: its characters and its tokens as a message's content
	emptyOnce     sync.Once    // a chat form's count of an empty message
	empty         int
	emptyErr      error
}

// planIndexes are the plan's indexes a request sends with its own prompt:
// all of them, or with a Source those the warm-up sends (warm-up request
// k sends index k mod Len).
func (s *sizer) planIndexes() []int {
	n := s.plan.Len()
	if s.plan.Workload.Source != nil {
		n = min(n, s.plan.Warmups)
	}
	ix := make([]int, n)
	for i := range ix {
		ix[i] = i
	}
	return ix
}

// representatives returns the indexes of indexes calibration measures:
// those of the smallest, the median and the largest distinct planned
// context.
func (s *sizer) representatives(indexes []int) []int {
	sizes := make([]int, len(indexes))
	for k, i := range indexes {
		sizes[k] = s.plan.Contexts[i]
	}
	out := representativeSizes(sizes)
	for k, c := range out {
		out[k] = indexes[slices.Index(sizes, c)]
	}
	return out
}

// representativeSizes returns the smallest, the median and the largest
// distinct value of sizes, ascending, without repeats.
func representativeSizes(sizes []int) []int {
	d := slices.Clone(sizes)
	slices.Sort(d)
	d = slices.Compact(d)
	if len(d) == 0 {
		return nil
	}
	picks := []int{d[0]}
	if n := len(d); n > 2 {
		picks = append(picks, d[n/2])
	}
	if n := len(d); n > 1 {
		picks = append(picks, d[n-1])
	}
	return picks
}

// calibrate sends prompt as the one user message of a calibration request
// (max_tokens 1, unmeasured) and returns its exchange; the error is only
// for a run whose context ended.
func (s *sizer) calibrate(ctx context.Context, prompt []byte) (*client.Exchange, error) {
	s.body.Set(s.enc.AppendBody(s.body.Reset(), prompt))
	return s.send(ctx, &s.body)
}

// send sends a calibration request's body.
func (s *sizer) send(ctx context.Context, body client.Body) (*client.Exchange, error) {
	ex := &client.Exchange{Unmeasured: true}
	s.cl.Send(ctx, body, ex)
	s.record.calibrationRequests++
	if class, _ := ex.Failure(); class != "" && ctx.Err() != nil {
		return nil, fmt.Errorf("%w: %w", errPromptSizing, context.Cause(ctx))
	}
	return ex, nil
}

// byTokenize sizes the prompts of indexes exactly with the server's
// tokenizer. The prompt of the smallest planned context is first sized
// with the endpoint alone (so the calibration request fits the window
// whatever the tokenizer's ratio), then one calibration request learns
// offset = usage.prompt_tokens - the endpoint's count of the same prompt
// (0 when the endpoint applies the chat template as the server does), and
// each request's budget is searched until the endpoint counts its planned
// context minus offset (see search).
func (s *sizer) byTokenize(ctx context.Context, indexes []int) error {
	tok := s.tok
	first := s.representatives(indexes)[0]
	c := s.plan.Contexts[first]
	ratio := min(max(tok.ProbeRatio(), budget.MinCharsPerToken), budget.MaxCharsPerToken)
	r, err := s.search(ctx, first, c, ratio)
	if err != nil {
		return err
	}
	if err := s.learnOffset(ctx, s.planText(first), r.Budget, c); err != nil {
		return err
	}
	ratio = float64(r.Budget) / float64(max(r.Tokens, 1))
	for _, i := range indexes {
		c := s.plan.Contexts[i]
		r, err := s.search(ctx, i, c-s.offset, ratio)
		if err != nil {
			return err
		}
		s.chars[i] = r.Budget
		if r.Tokens > c-s.offset {
			s.plan.least[i] = r.Tokens + s.offset // the closing instruction alone counts more
		}
		ratio = float64(r.Budget) / float64(max(c-s.offset, 1))
	}
	return s.checkBounds(indexes, fmt.Sprintf("%s counts and an offset of %d tokens", tok.Path(), s.offset))
}

// learnOffset sends txt at chars characters as one calibration request and
// learns offset = usage.prompt_tokens - the endpoint's count of the same
// prompt; c is the count txt was sized for, by which the offset is judged.
func (s *sizer) learnOffset(ctx context.Context, txt calText, chars, c int) error {
	tok := s.tok
	k := &calibrator{s: s}
	m, err := k.measure(ctx, txt, chars)
	if err != nil {
		return err
	}
	counted, err := tok.Count(ctx, s.prompt) // the calibration prompt just sent
	if err != nil {
		return err
	}
	if m.cut {
		return fmt.Errorf("%w: the server counted %d tokens, at its window of %d, for a calibration prompt its tokenizer (%s) counts %d: it cut the prompt, or counts differently; plan for a smaller context",
			errPromptSizing, m.tokens, s.window, tok.Path(), counted)
	}
	offset := m.tokens - counted
	if abs(offset) > max(c/2, 256) {
		return fmt.Errorf("%w: the server counted %d tokens (usage.prompt_tokens) for a %d-character calibration prompt its tokenizer (%s) counts %d: the two disagree by more than half the planned %d",
			errPromptSizing, m.tokens, m.chars, tok.Path(), counted, c)
	}
	if err := checkPoint(nil, budget.Point{Chars: m.chars, Tokens: m.tokens}, "calibration of "+txt.what); err != nil {
		return err
	}
	s.offset, s.offsetKnown = offset, true
	return nil
}

// search finds the budget of request index whose prompt the endpoint
// counts as target tokens (budget.Search), the first guess at ratio
// characters per token, between the least budget that holds its closing
// instructions and budget.MaxChars of its planned context.
func (s *sizer) search(ctx context.Context, index, target int, ratio float64) (budget.Result, error) {
	tok := s.tok
	count := func(b int) (int, error) {
		var err error
		s.prompt, err = s.plan.layout.Append(s.prompt[:0], index, index, s.plan.Contexts[index], b, prompt.Measured)
		if err != nil {
			return 0, err
		}
		n, err := tok.Count(ctx, s.prompt)
		if err != nil {
			return 0, err
		}
		if float64(len(s.prompt)) > budget.MaxCharsPerToken*float64(max(n, 1)) && n < target {
			return 0, fmt.Errorf("%w: POST %s counted %d tokens for a %d-character prompt (above the plausible %g characters per token): not a count of the prompt",
				errPromptSizing, tok.Path(), n, len(s.prompt), budget.MaxCharsPerToken)
		}
		return n, nil
	}
	guess := int(math.Round(ratio * float64(target)))
	return budget.Search(count, target, s.minChars[index], budget.MaxChars(s.plan.Contexts[index]), guess)
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

// tokenizeConfig is what the counts of a run against t (resolved, its
// model known) with the resolved workload w send: the chat requests'
// thinking control, when it is not a reasoning effort.
func tokenizeConfig(t Target, w Workload) tokenize.Config {
	api := t.apiOf()
	cfg := tokenize.Config{BaseURL: t.BaseURL, Model: t.Model, Timeout: w.Timeout, Bare: api == client.APICompletions || api == client.APIEmbeddings}
	if r := requestOf(t, w); r.ReasoningEffort == "" {
		cfg.Thinking = r.Thinking
	}
	return cfg
}

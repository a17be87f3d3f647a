package capacity

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/anvilbench/anvil/capacity/internal/budget"
	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/prompt"
)

// This file is what exact sizing believes of a server's counts, and the
// calibration that learns them from unmeasured requests
// (capacity/PROTOCOL.md#exact-token-sizing).

// Calibration steps (capacity/PROTOCOL.md#exact-token-sizing).
const (
	// calibrationGrowth is the most a calibration prompt grows, in
	// characters, over the largest prompt counted before it: calibration
	// starts small and grows geometrically, so that no step can overshoot
	// the window by much even on a tokenizer far from the first guess.
	calibrationGrowth = 4
	// calibrationSteps is the most calibration requests spent on one
	// representative context before calibration gives up.
	calibrationSteps = 8
	// calibrationStartShare: the first calibration prompt is sized for
	// min(context, window / calibrationStartShare) tokens at
	// prompt.CharsPerToken: within the window even at a sixth of the
	// reference's ratio.
	calibrationStartShare = 16
)

// maxCalibrationRequests is the most unmeasured calibration requests exact
// sizing sends without a tokenizer endpoint: calibrationSteps for each of at
// most three representative planned contexts (the smallest, the median and
// the largest). In practice the first takes three to five (it grows from a
// small prompt) and the others one or two. With /tokenize it sends one.
const maxCalibrationRequests = 3 * calibrationSteps

// calibrationTolerance is how far from its planned context c a
// calibration point may count for calibration to stop there: 0.2 % of c,
// at least 2 tokens.
func calibrationTolerance(c int) int { return max(2, c/500) }

// nearWindow is the count at and above which a calibration count is not
// believed: a server that cuts a prompt to its window (Ollama reports the
// window itself as usage.prompt_tokens) answers such counts whatever the
// prompt. window is the window the server serves (the truncation window);
// the slack is half the room the plan keeps free below its own window
// (MaxTokens + Margin), at least one token, so every planned context is
// below it.
func nearWindow(p *plan, window int) int {
	return window - max(1, (p.MaxModelLen-p.PromptBudget)/2)
}

// sizePoint is one observation: a prompt of chars characters counted as
// tokens.
type sizePoint struct{ chars, tokens int }

func (p sizePoint) String() string {
	return fmt.Sprintf("%d characters = %d tokens", p.chars, p.tokens)
}

// pointsText lists points for an error message.
func pointsText(pts []sizePoint) string {
	if len(pts) == 0 {
		return "no count believed"
	}
	s := make([]string, len(pts))
	for i, p := range pts {
		s[i] = p.String()
	}
	return strings.Join(s, ", ")
}

// cutHint ends a message about counts that grow too little.
const cutHint = " (a prompt cut to the server's window counts the same whatever its length: is Target.MaxModelLen above the window the server serves?)"

// checkPoint returns an error when p, a new count by the server, is not
// believable with the points already believed: a ratio above
// budget.MaxCharsPerToken, a count that falls while the prompt grows, or a ratio
// between p and a point far from it (an eighth of the larger prompt's
// characters or more) outside [budget.MinCharsPerToken, budget.MaxCharsPerToken].
func checkPoint(pts []sizePoint, p sizePoint, what string) error {
	if p.tokens <= 0 {
		return fmt.Errorf("%w: %s: the server counted %d tokens for a %d-character prompt: want a positive count", errPromptSizing, what, p.tokens, p.chars)
	}
	if r := float64(p.chars) / float64(p.tokens); r > budget.MaxCharsPerToken {
		return fmt.Errorf("%w: %s: the server counted %d tokens for a %d-character prompt (%.1f characters per token, above the plausible %g): not a count of the prompt",
			errPromptSizing, what, p.tokens, p.chars, r, budget.MaxCharsPerToken)
	}
	for _, q := range pts {
		a, b := q, p // a the shorter prompt
		if a.chars > b.chars {
			a, b = b, a
		}
		if a.chars == b.chars {
			continue
		}
		slack := 2 + a.tokens/1000 // one character more may merge tokens
		if b.tokens+slack < a.tokens {
			return fmt.Errorf("%w: %s: the count moved the wrong way: %s but %s", errPromptSizing, what, a, b)
		}
		dc, dn := b.chars-a.chars, b.tokens-a.tokens
		if dc*8 < b.chars {
			continue // too close for a ratio
		}
		if dn <= 0 {
			return fmt.Errorf("%w: %s: the count did not grow with the prompt: %s but %s%s", errPromptSizing, what, a, b, cutHint)
		}
		if r := float64(dc) / float64(dn); r < budget.MinCharsPerToken || r > budget.MaxCharsPerToken {
			hint := ""
			if r > budget.MaxCharsPerToken {
				hint = cutHint
			}
			return fmt.Errorf("%w: %s: %s and %s imply %.2f characters per token, outside the plausible %g..%g%s",
				errPromptSizing, what, a, b, r, budget.MinCharsPerToken, budget.MaxCharsPerToken, hint)
		}
	}
	return nil
}

// calText is a text calibration measures: a prompt written at any
// length, sent as one user message.
type calText struct {
	what  string                                      // names the text in errors: "request 3", "block text"
	write func(dst []byte, chars int) ([]byte, error) // appends the text at chars characters
	least int                                         // the fewest characters (its closing instruction)
	bound int                                         // the most characters (budget.MaxChars of its plan)
}

// planText is the calibration prompt standing for measured request index
// of the plan (appendCalibrationPrompt).
func (s *sizer) planText(index int) calText {
	p := s.plan
	return calText{
		what: fmt.Sprintf("request %d", index),
		write: func(dst []byte, chars int) ([]byte, error) {
			return p.appendCalibrationPrompt(dst, index, chars)
		},
		least: s.minChars[index],
		bound: budget.MaxChars(p.Contexts[index]),
	}
}

// calibrator learns the server's counts of one kind of text from
// calibration requests.
type calibrator struct {
	s   *sizer
	pts []sizePoint
}

// measured is one calibration request's outcome: the count, and whether it
// is to be believed.
type measured struct {
	chars, tokens int
	cut           bool // the count is at or near the window: the prompt was cut
	refused       bool // refused over the window; tokens is the refusal's count
}

// measure sends txt at chars characters and reads the server's count:
// usage.prompt_tokens, or the counts of an over-window refusal (which
// also lower the window known).
func (k *calibrator) measure(ctx context.Context, txt calText, chars int) (measured, error) {
	s := k.s
	chars = max(chars, txt.least)
	if chars > txt.bound {
		return measured{}, fmt.Errorf("%w: a calibration prompt of %s would have %d characters, above the bound of %d (%g characters per token of its plan): the counts so far (%s) are implausible",
			errPromptSizing, txt.what, chars, txt.bound, budget.MaxCharsPerToken, pointsText(k.pts))
	}
	var err error
	if s.prompt, err = txt.write(s.prompt[:0], chars); err != nil {
		return measured{}, err
	}
	ex, err := s.calibrate(ctx, s.prompt)
	if err != nil {
		return measured{}, err
	}
	return k.read(ex, txt.what, len(s.prompt))
}

// read is the count of a calibration request of chars characters for
// what.
func (k *calibrator) read(ex *client.Exchange, what string, chars int) (measured, error) {
	s := k.s
	m := measured{chars: chars}
	if class, message := ex.Failure(); class != "" {
		r, ok := ex.Refusal()
		if !ok {
			return measured{}, fmt.Errorf("%w: calibration request for %s (%d characters): %s: %s (counts so far: %s)",
				errPromptSizing, what, chars, class, message, pointsText(k.pts))
		}
		s.window = min(s.window, r.Window)
		m.tokens, m.refused = r.PromptTokens, true
		return m, nil
	}
	n, ok := ex.PromptTokens()
	if !ok || n <= 0 {
		return measured{}, fmt.Errorf("%w: the server has no tokenizer endpoint and its calibration response reported no usage.prompt_tokens: use promptSizingReference", errPromptSizing)
	}
	m.tokens = n
	m.cut = m.tokens >= nearWindow(s.plan, s.window)
	return m, nil
}

// reach calibrates txt until a believed point counts within
// calibrationTolerance of c, in at most calibrationSteps requests. The
// first prompt is small; each next one is read off the curve through the
// believed points (charsFor), grown at most calibrationGrowth-fold over the
// largest believed prompt, and kept below the smallest prompt that was cut
// or refused. A count at or near the window is not believed (the prompt
// was cut): the next prompt is smaller.
func (k *calibrator) reach(ctx context.Context, txt calText, c int) error {
	s := k.s
	tol := calibrationTolerance(c)
	if near := nearWindow(s.plan, s.window); c >= near {
		return fmt.Errorf("%w: %s is planned at %d tokens, at or above %d, the window of %d tokens the server serves less half the plan's free room: no count there is believed (a server that cuts prompts answers its window): plan for the server's window",
			errPromptSizing, txt.what, c, near, s.window)
	}
	hi := math.MaxInt // the smallest prompt cut or refused
	var cuts []string
	last, sent := -1, 0
	for step := range calibrationSteps {
		guess := k.next(txt, c, hi, step)
		if guess == last || k.measured(guess) {
			// The curve points at a prompt already counted (a text whose
			// count jumps at a digit run): halve the bracket instead.
			var ok bool
			if guess, ok = k.bisect(c, hi); !ok {
				break // no prompt between the points left to try
			}
		}
		last = guess
		sent++
		m, err := k.measure(ctx, txt, guess)
		if err != nil {
			return err
		}
		if m.cut {
			hi = min(hi, m.chars)
			cuts = append(cuts, fmt.Sprintf("%d characters counted %d", m.chars, m.tokens))
			continue
		}
		p := sizePoint{m.chars, m.tokens}
		if err := checkPoint(k.pts, p, "calibration of "+txt.what); err != nil {
			return err
		}
		k.pts = append(k.pts, p)
		if m.refused {
			hi = min(hi, m.chars)
			if c >= nearWindow(s.plan, s.window) {
				return fmt.Errorf("%w: the server refused a prompt it counted at %d tokens over its window of %d tokens (n_ctx), and %s is planned at %d, not below %d (that window less half the plan's free room): plan for the server's window",
					errPromptSizing, m.tokens, s.window, txt.what, c, nearWindow(s.plan, s.window))
			}
			continue
		}
		if abs(m.tokens-c) <= tol {
			return nil
		}
	}
	why := fmt.Sprintf("the last believed counts were %s", pointsText(k.pts))
	if len(cuts) > 0 {
		why += fmt.Sprintf("; not believed, at or near the window of %d (at or above %d: the prompt was cut): %s", s.window, nearWindow(s.plan, s.window), strings.Join(cuts, ", "))
	}
	return fmt.Errorf("%w: calibration of %s did not count within %d tokens of its planned %d in %d requests: %s",
		errPromptSizing, txt.what, tol, c, sent, why)
}

// measured reports whether a prompt of chars characters was believed.
func (k *calibrator) measured(chars int) bool {
	return slices.ContainsFunc(k.pts, func(p sizePoint) bool { return p.chars == chars })
}

// bisect is the prompt halfway between the longest believed prompt that
// counted fewer than c and the shortest that counted more (below hi, the
// smallest prompt cut or refused); false when no prompt lies between.
func (k *calibrator) bisect(c, hi int) (int, bool) {
	lo, up := 0, hi
	for _, p := range k.pts {
		if p.tokens < c {
			lo = max(lo, p.chars)
		} else if p.tokens > c {
			up = min(up, p.chars)
		}
	}
	if up == math.MaxInt || up-lo <= 1 {
		return 0, false
	}
	return lo + (up-lo)/2, true
}

// next is the budget of the next calibration prompt of txt for planned
// context c.
func (k *calibrator) next(txt calText, c, hi, step int) int {
	s := k.s
	var g int
	if len(k.pts) == 0 {
		start := min(c, max(s.window/calibrationStartShare, 1))
		g = int(math.Round(prompt.CharsPerToken * float64(start)))
		for range step { // every earlier try was cut
			g /= calibrationGrowth
		}
	} else {
		g = charsFor(k.pts, c)
		largest := 0
		for _, p := range k.pts {
			largest = max(largest, p.chars)
		}
		g = min(g, calibrationGrowth*largest)
	}
	if g >= hi {
		below := 0 // the largest believed prompt under hi
		for _, p := range k.pts {
			if p.chars < hi {
				below = max(below, p.chars)
			}
		}
		g = below + (hi-below)/2
	}
	return max(g, txt.least, 1)
}

// byCalibration sizes the prompts of indexes from calibration requests:
// each representative context is calibrated (reach), then every request's
// budget is read off the piecewise-linear curve through the believed
// (characters, tokens) points (charsFor), which follows the chat
// template's fixed tokens and a ratio that changes with the prompt's
// size. A request planned below what its least prompt counts on the
// curve is sized at that least prompt (plan.least).
func (s *sizer) byCalibration(ctx context.Context, indexes []int) error {
	k := &calibrator{s: s}
	for _, i := range s.representatives(indexes) {
		if err := k.reach(ctx, s.planText(i), s.plan.Contexts[i]); err != nil {
			return err
		}
	}
	for _, i := range indexes {
		c := s.plan.Contexts[i]
		s.chars[i] = max(charsFor(k.pts, c), s.minChars[i])
		if least := tokensAt(k.pts, s.minChars[i]); least-c > calibrationTolerance(c) {
			s.plan.least[i] = least
		}
	}
	s.record.source = sizingSourceCalibration
	return s.checkBounds(indexes, pointsText(k.pts))
}

// checkBounds fails the sizing when a budget of indexes is above
// budget.MaxChars of its planned context; learned says what the budgets
// were learned from.
func (s *sizer) checkBounds(indexes []int, learned string) error {
	for _, i := range indexes {
		c := s.plan.Contexts[i]
		if b := budget.MaxChars(c); s.chars[i] > b {
			return fmt.Errorf("%w: request %d (planned %d tokens) would have %d characters, above the bound of %d (%g characters per token): learned from %s",
				errPromptSizing, i, c, s.chars[i], b, budget.MaxCharsPerToken, learned)
		}
	}
	return nil
}

// curvePoints sorts pts by tokens and keeps one point per count.
func curvePoints(pts []sizePoint) []sizePoint {
	pts = slices.Clone(pts)
	slices.SortFunc(pts, func(a, b sizePoint) int {
		return cmp.Or(cmp.Compare(a.tokens, b.tokens), cmp.Compare(a.chars, b.chars))
	})
	return slices.CompactFunc(pts, func(a, b sizePoint) bool { return a.tokens == b.tokens })
}

// tokensAt reads the curve of charsFor the other way: the tokens the
// piecewise-linear curve through pts (by characters) counts at chars
// characters, the end segments extended beyond the points, and through
// the origin with a single point.
func tokensAt(pts []sizePoint, chars int) int {
	pts = slices.Clone(pts)
	slices.SortFunc(pts, func(a, b sizePoint) int {
		return cmp.Or(cmp.Compare(a.chars, b.chars), cmp.Compare(a.tokens, b.tokens))
	})
	pts = slices.CompactFunc(pts, func(a, b sizePoint) bool { return a.chars == b.chars })
	if len(pts) == 1 {
		return int(math.Round(float64(pts[0].tokens) * float64(chars) / float64(max(pts[0].chars, 1))))
	}
	k, _ := slices.BinarySearchFunc(pts, chars, func(p sizePoint, c int) int { return cmp.Compare(p.chars, c) })
	k = min(max(k, 1), len(pts)-1) // the segment [k-1, k]
	a, b := pts[k-1], pts[k]
	if b.chars == a.chars {
		return b.tokens
	}
	slope := float64(b.tokens-a.tokens) / float64(b.chars-a.chars)
	return int(math.Round(float64(a.tokens) + float64(chars-a.chars)*slope))
}

// charsFor inverts the observed points: the characters at which the
// piecewise-linear curve through pts (by tokens) reaches tokens, the end
// segments extended beyond the points, and through the origin with a
// single distinct count.
func charsFor(pts []sizePoint, tokens int) int {
	pts = curvePoints(pts)
	if len(pts) == 1 {
		return int(math.Round(float64(pts[0].chars) * float64(tokens) / float64(pts[0].tokens)))
	}
	k, _ := slices.BinarySearchFunc(pts, tokens, func(p sizePoint, t int) int { return cmp.Compare(p.tokens, t) })
	k = min(max(k, 1), len(pts)-1) // the segment [k-1, k]
	a, b := pts[k-1], pts[k]
	slope := float64(b.chars-a.chars) / float64(b.tokens-a.tokens)
	return int(math.Round(float64(a.chars) + float64(tokens-a.tokens)*slope))
}

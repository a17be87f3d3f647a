package capacity

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
)

// This file is what exact sizing believes of a server's counts, and the
// calibration that learns them from unmeasured requests
// (capacity/PROTOCOL.md#exact-token-sizing).

// The plausible range of characters per token. No tokenizer counts the
// ASCII filler of a prompt (prompt.go) at more than a few characters per
// token (the largest vocabularies reach about 5), and none at fewer than one
// (byte-level and byte-fallback tokenizers give at most a token a byte).
// A count outside the range is not a count of the prompt: exact sizing
// fails naming it rather than build a prompt from it.
const (
	// maxCharsPerToken is the most characters per token exact sizing
	// believes: of any one count (the chat template's tokens only lower a
	// count's ratio), and between two counts of prompts far apart. It also
	// bounds every prompt: no prompt planned at c tokens has more than
	// maxCharsPerToken * c characters (maxPromptChars), so no request body
	// exceeds twice that (JSON escapes at most one character in two of the
	// filler, a newline) plus the fixed fields.
	maxCharsPerToken = 10.0
	// minCharsPerToken is the fewest characters per token exact sizing
	// believes between two counts of prompts far apart (the difference of
	// their characters over the difference of their counts, free of the
	// template's fixed tokens).
	minCharsPerToken = 0.5
)

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
	// promptCharsPerToken: within the window even at a sixth of the
	// reference's ratio.
	calibrationStartShare = 16
)

// maxCalibrationRequests is the most unmeasured calibration requests exact
// sizing sends without a tokenizer endpoint: calibrationSteps for each of at
// most three representative planned contexts (the smallest, the median and
// the largest). In practice the first takes three to five (it grows from a
// small prompt) and the others one or two. With /tokenize it sends one.
const maxCalibrationRequests = 3 * calibrationSteps

// maxPromptChars is the bound on the characters of a prompt planned at
// context tokens (maxCharsPerToken).
func maxPromptChars(context int) int {
	return int(math.Ceil(maxCharsPerToken * float64(context)))
}

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
// maxCharsPerToken, a count that falls while the prompt grows, or a ratio
// between p and a point far from it (an eighth of the larger prompt's
// characters or more) outside [minCharsPerToken, maxCharsPerToken].
func checkPoint(pts []sizePoint, p sizePoint, what string) error {
	if p.tokens <= 0 {
		return fmt.Errorf("%w: %s: the server counted %d tokens for a %d-character prompt: want a positive count", errPromptSizing, what, p.tokens, p.chars)
	}
	if r := float64(p.chars) / float64(p.tokens); r > maxCharsPerToken {
		return fmt.Errorf("%w: %s: the server counted %d tokens for a %d-character prompt (%.1f characters per token, above the plausible %g): not a count of the prompt",
			errPromptSizing, what, p.tokens, p.chars, r, maxCharsPerToken)
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
		if r := float64(dc) / float64(dn); r < minCharsPerToken || r > maxCharsPerToken {
			hint := ""
			if r > maxCharsPerToken {
				hint = cutHint
			}
			return fmt.Errorf("%w: %s: %s and %s imply %.2f characters per token, outside the plausible %g..%g%s",
				errPromptSizing, what, a, b, r, minCharsPerToken, maxCharsPerToken, hint)
		}
	}
	return nil
}

// calibrator learns the server's counts from calibration requests.
type calibrator struct {
	s      *sizer
	window int // the server's window (the truncation window), lowered by a refusal's n_ctx
	pts    []sizePoint
}

// measured is one calibration request's outcome: the count, and whether it
// is to be believed.
type measured struct {
	chars, tokens int
	cut           bool // the count is at or near the window: the prompt was cut
	refused       bool // refused over the window; tokens is the refusal's count
}

// measure sends the calibration prompt of index at chars characters and
// reads the server's count: usage.prompt_tokens, or the counts of an
// over-window refusal (which also lower the window known).
func (k *calibrator) measure(ctx context.Context, index, chars int) (measured, error) {
	s := k.s
	chars = max(chars, s.minChars[index])
	if b := maxPromptChars(s.plan.Contexts[index]); chars > b {
		return measured{}, fmt.Errorf("%w: a calibration prompt of request %d would have %d characters, above the bound of %d (%g characters per token of its planned %d): the counts so far (%s) are implausible",
			errPromptSizing, index, chars, b, maxCharsPerToken, s.plan.Contexts[index], pointsText(k.pts))
	}
	ex, err := s.calibrate(ctx, index, chars)
	if err != nil {
		return measured{}, err
	}
	m := measured{chars: len(s.prompt)}
	if class, message := ex.Failure(); class != "" {
		r, ok := ex.Refusal()
		if !ok {
			return measured{}, fmt.Errorf("%w: calibration request for request %d (%d characters): %s: %s (counts so far: %s)",
				errPromptSizing, index, len(s.prompt), class, message, pointsText(k.pts))
		}
		k.window = min(k.window, r.Window)
		m.tokens, m.refused = r.PromptTokens, true
		return m, nil
	}
	n, ok := ex.PromptTokens()
	if !ok || n <= 0 {
		return measured{}, fmt.Errorf("%w: the server has no tokenizer endpoint and its calibration response reported no usage.prompt_tokens: use promptSizingReference", errPromptSizing)
	}
	m.tokens = n
	m.cut = m.tokens >= nearWindow(s.plan, k.window)
	return m, nil
}

// reach calibrates the representative index until a believed point counts
// within calibrationTolerance of its planned context, in at most
// calibrationSteps requests. The first prompt is small; each next one is
// read off the curve through the believed points (charsFor), grown at most
// calibrationGrowth-fold over the largest believed prompt, and kept below
// the smallest prompt that was cut or refused. A count at or near the
// window is not believed (the prompt was cut): the next prompt is smaller.
func (k *calibrator) reach(ctx context.Context, index int) error {
	s := k.s
	c := s.plan.Contexts[index]
	tol := calibrationTolerance(c)
	if near := nearWindow(s.plan, k.window); c >= near {
		return fmt.Errorf("%w: request %d is planned at %d tokens, at or above %d, the window of %d tokens the server serves less half the plan's free room: no count there is believed (a server that cuts prompts answers its window): plan for the server's window",
			errPromptSizing, index, c, near, k.window)
	}
	hi := math.MaxInt // the smallest prompt cut or refused
	var cuts []string
	last, sent := -1, 0
	for step := range calibrationSteps {
		guess := k.next(index, c, hi, step)
		if guess == last {
			break // no prompt between the points left to try
		}
		last = guess
		sent++
		m, err := k.measure(ctx, index, guess)
		if err != nil {
			return err
		}
		if m.cut {
			hi = min(hi, m.chars)
			cuts = append(cuts, fmt.Sprintf("%d characters counted %d", m.chars, m.tokens))
			continue
		}
		p := sizePoint{m.chars, m.tokens}
		if err := checkPoint(k.pts, p, fmt.Sprintf("calibration of request %d", index)); err != nil {
			return err
		}
		k.pts = append(k.pts, p)
		if m.refused {
			hi = min(hi, m.chars)
			if c >= nearWindow(s.plan, k.window) {
				return fmt.Errorf("%w: the server refused a prompt it counted at %d tokens over its window of %d tokens (n_ctx), and request %d is planned at %d, not below %d (that window less half the plan's free room): plan for the server's window",
					errPromptSizing, m.tokens, k.window, index, c, nearWindow(s.plan, k.window))
			}
			continue
		}
		if abs(m.tokens-c) <= tol {
			return nil
		}
	}
	why := fmt.Sprintf("the last believed counts were %s", pointsText(k.pts))
	if len(cuts) > 0 {
		why += fmt.Sprintf("; not believed, at or near the window of %d (at or above %d: the prompt was cut): %s", k.window, nearWindow(s.plan, k.window), strings.Join(cuts, ", "))
	}
	return fmt.Errorf("%w: calibration of request %d did not count within %d tokens of its planned %d in %d requests: %s",
		errPromptSizing, index, tol, c, sent, why)
}

// next is the budget of the next calibration prompt for planned context c.
func (k *calibrator) next(index, c, hi, step int) int {
	s := k.s
	var g int
	if len(k.pts) == 0 {
		start := min(c, max(k.window/calibrationStartShare, 1))
		g = int(math.Round(promptCharsPerToken * float64(start)))
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
	return max(g, s.minChars[index], 1)
}

// byCalibration sizes every prompt from calibration requests: each
// representative context is calibrated (reach), then every request's
// budget is read off the piecewise-linear curve through the believed
// (characters, tokens) points (charsFor), which follows the chat
// template's fixed tokens and a ratio that changes with the prompt's size.
func (s *sizer) byCalibration(ctx context.Context, window int) error {
	k := &calibrator{s: s, window: window}
	for _, i := range s.representatives() {
		if err := k.reach(ctx, i); err != nil {
			return err
		}
	}
	s.chars = make([]int, s.plan.Len())
	for i, c := range s.plan.Contexts {
		s.chars[i] = max(charsFor(k.pts, c), s.minChars[i])
	}
	s.record.source = sizingSourceCalibration
	return s.checkBounds(pointsText(k.pts))
}

// checkBounds fails the sizing when a budget is above maxPromptChars of its
// planned context; learned says what the budgets were learned from.
func (s *sizer) checkBounds(learned string) error {
	for i, c := range s.plan.Contexts {
		if b := maxPromptChars(c); s.chars[i] > b {
			return fmt.Errorf("%w: request %d (planned %d tokens) would have %d characters, above the bound of %d (%g characters per token): learned from %s",
				errPromptSizing, i, c, s.chars[i], b, maxCharsPerToken, learned)
		}
	}
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

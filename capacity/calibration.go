package capacity

import (
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

// checkPoint returns an error wrapping errPromptSizing, naming what,
// when p, a new count by the server, is not believable with the points
// already believed (budget.Check).
func checkPoint(pts []budget.Point, p budget.Point, what string) error {
	if err := budget.Check(pts, p); err != nil {
		return fmt.Errorf("%w: %s: %w", errPromptSizing, what, err)
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
	pts []budget.Point
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
			errPromptSizing, txt.what, chars, txt.bound, budget.MaxCharsPerToken, budget.PointsText(k.pts))
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
				errPromptSizing, what, chars, class, message, budget.PointsText(k.pts))
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
// believed points (budget.Next), grown at most budget.Growth-fold over the
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
		guess := budget.Next(k.pts, c, k.first(c), hi, step, txt.least)
		if guess == last || k.measured(guess) {
			// The curve points at a prompt already counted (a text whose
			// count jumps at a digit run): halve the bracket instead.
			var ok bool
			if guess, ok = budget.Bisect(k.pts, c, hi); !ok {
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
		p := budget.Point{Chars: m.chars, Tokens: m.tokens}
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
	why := fmt.Sprintf("the last believed counts were %s", budget.PointsText(k.pts))
	if len(cuts) > 0 {
		why += fmt.Sprintf("; not believed, at or near the window of %d (at or above %d: the prompt was cut): %s", s.window, nearWindow(s.plan, s.window), strings.Join(cuts, ", "))
	}
	return fmt.Errorf("%w: calibration of %s did not count within %d tokens of its planned %d in %d requests: %s",
		errPromptSizing, txt.what, tol, c, sent, why)
}

// measured reports whether a prompt of chars characters was believed.
func (k *calibrator) measured(chars int) bool {
	return slices.ContainsFunc(k.pts, func(p budget.Point) bool { return p.Chars == chars })
}

// first is the first guess of a calibration of c tokens: sized for
// min(c, window / calibrationStartShare) tokens at prompt.CharsPerToken.
func (k *calibrator) first(c int) int {
	return int(math.Round(prompt.CharsPerToken * float64(min(c, max(k.s.window/calibrationStartShare, 1)))))
}

// byCalibration sizes the prompts of indexes from calibration requests:
// each representative context is calibrated (reach), then every request's
// budget is read off the piecewise-linear curve through the believed
// (characters, tokens) points (budget.CharsFor), which follows the chat
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
		s.chars[i] = max(budget.CharsFor(k.pts, c), s.minChars[i])
		if least := budget.TokensAt(k.pts, s.minChars[i]); least-c > calibrationTolerance(c) {
			s.plan.least[i] = least
		}
	}
	s.record.source = sizingSourceCalibration
	return s.checkBounds(indexes, budget.PointsText(k.pts))
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

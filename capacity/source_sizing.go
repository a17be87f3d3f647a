package capacity

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/anvilbench/anvil/capacity/internal/budget"
	"github.com/anvilbench/anvil/capacity/internal/client"
)

// This file is the Sizer (seams.go) exact sizing gives a SizedSource
// (capacity/PROTOCOL.md#exact-sizing-traffic): the chat template's fixed
// tokens, learned once, and Counters of the source's texts, exact with the
// server's tokenizer endpoint, else read off calibration curves.

// probeLine is the line a template probe repeats: counted alike wherever
// it stands, so that the count of m lines is the template's tokens plus m
// times the line's, and two counts give both. No measured prompt starts
// with it.
const probeLine = "# calibration probe: return compute(0)\n"

// Probe sizes, in lines: the template's tokens are read off the counts of
// probeShort and probeLong lines.
const (
	probeShort = 4
	probeLong  = 16
)

// serverSizer is the Sizer of one exact sizing.
type serverSizer struct {
	mu sync.Mutex // calibration requests share the sizer's buffers
	s  *sizer
}

var _ Sizer = (*serverSizer)(nil)

// Exact implements Sizer.
func (z *serverSizer) Exact() bool { return z.s.tok != nil }

// Window implements Sizer.
func (z *serverSizer) Window() int {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.s.window
}

// Template implements Sizer. The tokens of one user message's template,
// Template(0), are learned first: with a tokenizer endpoint as the
// server's count of a probe less the endpoint's count of the probe's text
// alone (one calibration request; the chat forms count an empty message
// for the text's template), without one as the intercept of two
// calibration requests of probeShort and probeLong probe lines. An
// exchange's tokens, Template(1) - Template(0), are learned when first
// asked: from the chat form's count of a conversation of three probes,
// else from one calibration request of that conversation. Template(k) is
// Template(0) plus k exchanges' tokens: a template that writes every
// message alike.
func (z *serverSizer) Template(ctx context.Context, exchanges int) (int, error) {
	if exchanges < 0 {
		return 0, fmt.Errorf("capacity: Sizer.Template(%d): exchanges must be >= 0", exchanges)
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	s := z.s
	if err := s.learnTemplate(ctx); err != nil {
		return 0, err
	}
	if exchanges == 0 {
		return s.templates[0], nil
	}
	if err := s.learnExchange(ctx); err != nil {
		return 0, err
	}
	return s.templates[0] + exchanges*(s.templates[1]-s.templates[0]), nil
}

// probeText is m probe lines.
func probeText(m int) string { return strings.Repeat(probeLine, m) }

// learnTemplate learns s.templates[0] (see serverSizer.Template).
func (s *sizer) learnTemplate(ctx context.Context) error {
	if s.templateKnown {
		return nil
	}
	probe := calText{what: "the template probe", least: 0, bound: budget.MaxChars(len(probeText(probeLong))),
		write: func(dst []byte, chars int) ([]byte, error) { return append(dst, probeText(probeLong)[:chars]...), nil }}
	short := len(probeText(probeShort))
	if s.tok != nil {
		if !s.offsetKnown {
			if err := s.learnOffset(ctx, probe, short, short); err != nil {
				return err
			}
		}
		// The server counts a text as the endpoint does, plus offset; a
		// chat form counts the template too, as it counts an empty message.
		s.templates[0] = s.offset
		if s.tok.Chat() {
			empty, err := s.emptyCount(ctx)
			if err != nil {
				return err
			}
			s.templates[0] += empty
		}
		text, err := s.textCount(ctx, probeText(probeShort))
		if err != nil {
			return err
		}
		s.probe = budget.Point{Chars: short, Tokens: text}
	} else {
		k := &calibrator{s: s}
		var pts [2]budget.Point
		for j, m := range []int{probeShort, probeLong} {
			got, err := k.measure(ctx, probe, len(probeText(m)))
			if err != nil {
				return err
			}
			if got.cut {
				return fmt.Errorf("%w: the server counted %d tokens, at its window of %d, for a %d-character template probe: it cut the prompt; plan for the server's window",
					errPromptSizing, got.tokens, s.window, got.chars)
			}
			pts[j] = budget.Point{Chars: got.chars, Tokens: got.tokens}
			if err := checkPoint(pts[:j], pts[j], "calibration of the template probe"); err != nil {
				return err
			}
		}
		perLine := float64(pts[1].Tokens-pts[0].Tokens) / float64(probeLong-probeShort)
		t0 := int(math.Round(float64(pts[0].Tokens) - perLine*probeShort))
		s.templates[0] = min(max(t0, 0), pts[0].Tokens)
		s.probe = budget.Point{Chars: short, Tokens: pts[0].Tokens - s.templates[0]}
	}
	s.templateKnown = true
	return nil
}

// learnExchange learns s.templates[1] (see serverSizer.Template).
func (s *sizer) learnExchange(ctx context.Context) error {
	if s.exchangeKnown {
		return nil
	}
	p := probeText(probeShort)
	conv := []Message{{Role: "user", Content: p}, {Role: "assistant", Content: p}, {Role: "user", Content: p}}
	var n int
	if s.tok != nil && s.tok.Chat() {
		c, err := s.tok.CountMessages(ctx, clientMessages(conv))
		if err != nil {
			return err
		}
		n = c + s.offset
	} else {
		sb, err := s.bodies.build(0, Request{Messages: conv, MaxTokens: 1})
		if err != nil {
			return err
		}
		ex, err := s.send(ctx, sb.body)
		if err != nil {
			return err
		}
		k := &calibrator{s: s}
		m, err := k.read(ex, "the exchange probe", 3*len(p))
		if err != nil {
			return err
		}
		if m.cut || m.refused {
			return fmt.Errorf("%w: the server counted %d tokens for a conversation of three %d-character probes, at or over its window of %d: plan for the server's window",
				errPromptSizing, m.tokens, len(p), s.window)
		}
		n = m.tokens
	}
	s.templates[1] = n - 3*s.probe.Tokens
	if s.templates[1] < s.templates[0] {
		return fmt.Errorf("%w: the server counted %d tokens for a conversation of three probes it counts %d each and %d with the template of one message: an exchange cannot count fewer than none",
			errPromptSizing, n, s.probe.Tokens, s.templates[0]+s.probe.Tokens)
	}
	s.exchangeKnown = true
	return nil
}

// textCount is the endpoint's count of text as a message's content: its
// count less, for a chat form, its count of an empty message (the
// template's tokens as the endpoint counts them).
func (s *sizer) textCount(ctx context.Context, text string) (int, error) {
	n, err := s.tok.Count(ctx, []byte(text))
	if err != nil || !s.tok.Chat() {
		return n, err
	}
	empty, err := s.emptyCount(ctx)
	return n - empty, err
}

// emptyCount is a chat form's count of an empty message, counted once.
func (s *sizer) emptyCount(ctx context.Context) (int, error) {
	s.emptyOnce.Do(func() {
		s.empty, s.emptyErr = s.tok.Count(ctx, nil)
	})
	return s.empty, s.emptyErr
}

// Counter implements Sizer: with a tokenizer endpoint, every text is
// counted by it (textCount); without, the kind's sizes (ladder: the
// smallest, the median and the largest of kind.Tokens and sizes at most
// 4-fold apart between them, each below the window) are calibrated as
// the synthetic plan's are (reach), and a
// text counts what the piecewise-linear curve through the believed points
// and the empty message (the template alone) counts at its length, less
// the template.
func (z *serverSizer) Counter(ctx context.Context, kind TextKind) (Counter, error) {
	s := z.s
	if s.tok != nil {
		return counterFunc(s.textCount), nil
	}
	if kind.Write == nil {
		return nil, fmt.Errorf("capacity: Sizer.Counter: TextKind %q has no Write", kind.Name)
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	if err := s.learnTemplate(ctx); err != nil {
		return nil, err
	}
	t0 := s.templates[0]
	near := nearWindow(s.plan, s.window)
	var sizes []int
	for _, n := range kind.Tokens {
		if n > 0 {
			sizes = append(sizes, min(n+t0, near-1-calibrationTolerance(near)))
		}
	}
	if len(sizes) == 0 {
		sizes = []int{min(256+t0, near/2)}
	}
	k := &calibrator{s: s}
	txt := calText{what: kind.Name, write: func(dst []byte, n int) ([]byte, error) { return kind.Write(dst, n), nil }}
	for _, c := range ladder(sizes) {
		txt.bound = budget.MaxChars(c)
		if err := k.reach(ctx, txt, c); err != nil {
			return nil, err
		}
	}
	pts := append(k.pts, budget.Point{Chars: 0, Tokens: t0})
	return counterFunc(func(_ context.Context, text string) (int, error) {
		return max(budget.TokensAt(pts, len(text))-t0, 0), nil
	}), nil
}

// Count implements Sizer.
func (z *serverSizer) Count(ctx context.Context, text string) (int, error) {
	s := z.s
	if s.tok != nil {
		return s.textCount(ctx, text)
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	if err := s.learnTemplate(ctx); err != nil {
		return 0, err
	}
	ex, err := s.calibrate(ctx, []byte(text))
	if err != nil {
		return 0, err
	}
	k := &calibrator{s: s}
	m, err := k.read(ex, fmt.Sprintf("a %d-character text", len(text)), len(text))
	if err != nil {
		return 0, err
	}
	if m.cut || m.refused {
		return 0, fmt.Errorf("%w: the server counted %d tokens for a %d-character text, at or over its window of %d: plan for the server's window",
			errPromptSizing, m.tokens, len(text), s.window)
	}
	return max(m.tokens-s.templates[0], 0), nil
}

// ladderStep is the most a kind's calibrated sizes grow from one to the
// next (ladder).
const ladderStep = 4

// ladder is the sizes calibration measures a kind of text at: the
// smallest, the median and the largest of sizes, and between them sizes
// of sizes at most ladderStep-fold apart, so that the curve between two
// points bends little (short texts count their first line's tokens more
// densely than long ones).
func ladder(sizes []int) []int {
	reps := representativeSizes(sizes)
	d := slices.Clone(sizes)
	slices.Sort(d)
	out := []int{reps[0]}
	for _, r := range reps[1:] {
		for r > ladderStep*out[len(out)-1] {
			// the largest size of sizes at most ladderStep times the last
			last := out[len(out)-1]
			k, _ := slices.BinarySearch(d, ladderStep*last+1)
			next := d[max(k-1, 0)]
			if next <= last {
				next = ladderStep * last
			}
			out = append(out, next)
		}
		if r > out[len(out)-1] {
			out = append(out, r)
		}
	}
	return out
}

// counterFunc adapts a function to a Counter.
type counterFunc func(ctx context.Context, text string) (int, error)

// Count implements Counter.
func (f counterFunc) Count(ctx context.Context, text string) (int, error) { return f(ctx, text) }

// clientMessages is msgs in the client's words.
func clientMessages(msgs []Message) []client.Message {
	out := make([]client.Message, len(msgs))
	for i, m := range msgs {
		out[i] = client.Message{Role: m.Role, Content: m.Content}
	}
	return out
}

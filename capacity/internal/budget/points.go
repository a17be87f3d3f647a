package budget

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// The counts a server gave exact sizing, and what sizing believes of them
// (capacity/PROTOCOL.md#exact-token-sizing).

// Point is one observation: a prompt of Chars characters counted as
// Tokens tokens.
type Point struct{ Chars, Tokens int }

// String is the point as errors name it.
func (p Point) String() string {
	return fmt.Sprintf("%d characters = %d tokens", p.Chars, p.Tokens)
}

// PointsText lists points for an error message.
func PointsText(pts []Point) string {
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

// Check returns an error when p, a new count by the server, is not
// believable with the points already believed: a ratio above
// MaxCharsPerToken, a count that falls while the prompt grows, or a ratio
// between p and a point far from it (an eighth of the larger prompt's
// characters or more) outside [MinCharsPerToken, MaxCharsPerToken].
func Check(pts []Point, p Point) error {
	if p.Tokens <= 0 {
		return fmt.Errorf("the server counted %d tokens for a %d-character prompt: want a positive count", p.Tokens, p.Chars)
	}
	if r := float64(p.Chars) / float64(p.Tokens); r > MaxCharsPerToken {
		return fmt.Errorf("the server counted %d tokens for a %d-character prompt (%.1f characters per token, above the plausible %g): not a count of the prompt",
			p.Tokens, p.Chars, r, MaxCharsPerToken)
	}
	for _, q := range pts {
		a, b := q, p // a the shorter prompt
		if a.Chars > b.Chars {
			a, b = b, a
		}
		if a.Chars == b.Chars {
			continue
		}
		slack := 2 + a.Tokens/1000 // one character more may merge tokens
		if b.Tokens+slack < a.Tokens {
			return fmt.Errorf("the count moved the wrong way: %s but %s", a, b)
		}
		dc, dn := b.Chars-a.Chars, b.Tokens-a.Tokens
		if dc*8 < b.Chars {
			continue // too close for a ratio
		}
		if dn <= 0 {
			return fmt.Errorf("the count did not grow with the prompt: %s but %s%s", a, b, cutHint)
		}
		if r := float64(dc) / float64(dn); r < MinCharsPerToken || r > MaxCharsPerToken {
			hint := ""
			if r > MaxCharsPerToken {
				hint = cutHint
			}
			return fmt.Errorf("%s and %s imply %.2f characters per token, outside the plausible %g..%g%s",
				a, b, r, MinCharsPerToken, MaxCharsPerToken, hint)
		}
	}
	return nil
}

// curvePoints sorts pts by tokens and keeps one point per count.
func curvePoints(pts []Point) []Point {
	pts = slices.Clone(pts)
	slices.SortFunc(pts, func(a, b Point) int {
		return cmp.Or(cmp.Compare(a.Tokens, b.Tokens), cmp.Compare(a.Chars, b.Chars))
	})
	return slices.CompactFunc(pts, func(a, b Point) bool { return a.Tokens == b.Tokens })
}

// TokensAt reads the curve of CharsFor the other way: the tokens the
// piecewise-linear curve through pts (by characters) counts at chars
// characters, the end segments extended beyond the points, and through
// the origin with a single point.
func TokensAt(pts []Point, chars int) int {
	pts = slices.Clone(pts)
	slices.SortFunc(pts, func(a, b Point) int {
		return cmp.Or(cmp.Compare(a.Chars, b.Chars), cmp.Compare(a.Tokens, b.Tokens))
	})
	pts = slices.CompactFunc(pts, func(a, b Point) bool { return a.Chars == b.Chars })
	if len(pts) == 1 {
		return int(math.Round(float64(pts[0].Tokens) * float64(chars) / float64(max(pts[0].Chars, 1))))
	}
	k, _ := slices.BinarySearchFunc(pts, chars, func(p Point, c int) int { return cmp.Compare(p.Chars, c) })
	k = min(max(k, 1), len(pts)-1) // the segment [k-1, k]
	a, b := pts[k-1], pts[k]
	if b.Chars == a.Chars {
		return b.Tokens
	}
	slope := float64(b.Tokens-a.Tokens) / float64(b.Chars-a.Chars)
	return int(math.Round(float64(a.Tokens) + float64(chars-a.Chars)*slope))
}

// CharsFor inverts the observed points: the characters at which the
// piecewise-linear curve through pts (by tokens) reaches tokens, the end
// segments extended beyond the points, and through the origin with a
// single distinct count.
func CharsFor(pts []Point, tokens int) int {
	pts = curvePoints(pts)
	if len(pts) == 1 {
		return int(math.Round(float64(pts[0].Chars) * float64(tokens) / float64(pts[0].Tokens)))
	}
	k, _ := slices.BinarySearchFunc(pts, tokens, func(p Point, t int) int { return cmp.Compare(p.Tokens, t) })
	k = min(max(k, 1), len(pts)-1) // the segment [k-1, k]
	a, b := pts[k-1], pts[k]
	slope := float64(b.Chars-a.Chars) / float64(b.Tokens-a.Tokens)
	return int(math.Round(float64(a.Chars) + float64(tokens-a.Tokens)*slope))
}

package budget

import "math"

// The steps of a calibration (capacity/PROTOCOL.md#exact-token-sizing):
// the prompts whose counts teach exact sizing a server's tokenizer when
// it has no tokenizer endpoint.

// Growth is the most a calibration prompt grows, in characters, over the
// largest prompt counted before it: calibration starts small and grows
// geometrically, so that no step can overshoot the window by much even on
// a tokenizer far from the first guess.
const Growth = 4

// Next is the characters of the next calibration prompt, step (0-based)
// of the calibration of a text planned at c tokens, of at least least
// characters. With no believed point it is first, the first guess, cut
// Growth-fold for each earlier step (every one was cut to the window).
// Otherwise it is read off the curve through the believed points pts
// (CharsFor), grown at most Growth-fold over the largest of them. It
// stays below hi, the smallest prompt cut or refused (math.MaxInt when
// none): a guess at or above it is halfway from the largest believed
// prompt below hi to hi.
func Next(pts []Point, c, first, hi, step, least int) int {
	g := first
	if len(pts) == 0 {
		for range step {
			g /= Growth
		}
	} else {
		largest := 0
		for _, p := range pts {
			largest = max(largest, p.Chars)
		}
		g = min(CharsFor(pts, c), Growth*largest)
	}
	if g >= hi {
		below := 0
		for _, p := range pts {
			if p.Chars < hi {
				below = max(below, p.Chars)
			}
		}
		g = below + (hi-below)/2
	}
	return max(g, least, 1)
}

// Bisect is the prompt halfway between the longest believed prompt of pts
// that counted fewer than c tokens and the shortest that counted more
// (below hi, the smallest prompt cut or refused): the next try when the
// curve points at a prompt already counted (a text whose count jumps at a
// digit run). False when no prompt lies between, or none counted more.
func Bisect(pts []Point, c, hi int) (int, bool) {
	lo, up := 0, hi
	for _, p := range pts {
		if p.Tokens < c {
			lo = max(lo, p.Chars)
		} else if p.Tokens > c {
			up = min(up, p.Chars)
		}
	}
	if up == math.MaxInt || up-lo <= 1 {
		return 0, false
	}
	return lo + (up-lo)/2, true
}

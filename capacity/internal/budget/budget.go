// Package budget finds the character budget of a prompt whose token
// count is a target: exact sizing (capacity/PROTOCOL.md#exact-token-sizing)
// searches the synthetic plan's prompts with it, and a trace replay or
// sessions (package traffic) their own. Search finds a budget from a
// count it can call; a calibration, which learns a server's counts from
// the prompts it sends, guesses each next prompt with Next (Bisect when
// the curve points at a prompt already counted), believes a count only
// when Check finds it plausible, and reads every budget off the curve of
// the believed points with CharsFor.
package budget

import "math"

// The plausible range of characters per token. No tokenizer counts ASCII
// prompt text at more than a few characters per token (the largest
// vocabularies reach about 5), and none at fewer than one (byte-level and
// byte-fallback tokenizers give at most a token a byte). A count outside
// the range is not a count of the prompt: exact sizing fails naming it
// rather than build a prompt from it.
const (
	// MaxCharsPerToken is the most characters per token exact sizing
	// believes: of any one count (the chat template's tokens only lower a
	// count's ratio), and between two counts of prompts far apart. It also
	// bounds every prompt: no prompt planned at c tokens has more than
	// MaxChars(c) characters, so no request body exceeds twice that (JSON
	// escapes at most one character in two of the filler, a newline) plus
	// the fixed fields.
	MaxCharsPerToken = 10.0
	// MinCharsPerToken is the fewest characters per token exact sizing
	// believes between two counts of prompts far apart (the difference of
	// their characters over the difference of their counts, free of the
	// template's fixed tokens).
	MinCharsPerToken = 0.5
)

// MaxCounts bounds the counts spent on one search. The search converges
// in two or three (the first guess uses the ratio of a similar prompt);
// the bound only stops a tokenizer whose counts do not grow with the
// text.
const MaxCounts = 16

// MaxChars is the bound on the characters of a prompt planned at tokens
// tokens: ceil(MaxCharsPerToken x tokens).
func MaxChars(tokens int) int { return int(math.Ceil(MaxCharsPerToken * float64(tokens))) }

// A Count returns the token count of the prompt of budget b characters.
// Counts must not fall as b grows (beyond a token or two a tokenizer may
// merge); an error ends the search.
type Count func(b int) (int, error)

// Result is the outcome of a search.
type Result struct {
	Budget int // the budget found
	Tokens int // its count
	Counts int // the counts spent
}

// Search finds the budget in [least, most] whose count is target: a
// secant step from guess, kept inside the bracket of budgets known to
// count too few and too many, and halving the bracket when a step would
// leave it; below a count above the target it grows geometrically. It
// ends on the exact count, on a bracket with no budget left between its
// ends, after MaxCounts counts, at most counting too few, or at least
// counting too many (the least prompt counts more than the target: the
// result's Tokens then says how many), with the budget whose count was
// closest (the smaller budget on a tie).
func Search(count Count, target, least, most, guess int) (Result, error) {
	lo, hi := least-1, math.MaxInt // counts below target at lo, above at hi
	b := min(max(guess, least), most)
	var best Result
	bestErr := math.MaxInt
	counts := 0
	for range MaxCounts {
		n, err := count(b)
		counts++
		if err != nil {
			return Result{}, err
		}
		if d := abs(n - target); d < bestErr || d == bestErr && b < best.Budget {
			best, bestErr = Result{Budget: b, Tokens: n}, d
		}
		switch {
		case n == target:
			best.Counts = counts
			return best, nil
		case n < target:
			lo = b
		default:
			hi = b
			if b == least {
				best.Counts = counts
				return best, nil // the least prompt alone counts more
			}
		}
		if hi-lo <= 1 || b == most && n < target {
			break
		}
		next := b + int(math.Round(float64(target-n)*float64(b)/float64(max(n, 1))))
		if next <= lo || next >= hi {
			if hi == math.MaxInt {
				next = min(lo+max(lo-least, 1), most) // grow until the count passes the target
			} else {
				next = lo + (hi-lo)/2
			}
		}
		b = next
	}
	best.Counts = counts
	return best, nil
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

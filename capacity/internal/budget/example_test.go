package budget_test

import (
	"fmt"
	"math"

	"github.com/anvilbench/anvil/capacity/internal/budget"
)

// A calibration of a prompt planned at 1,000 tokens on a server that
// counts one token for every 2.5 characters: each guess is read off the
// points believed so far, until a count is within tolerance.
func ExampleNext() {
	count := func(chars int) int { return chars * 2 / 5 }
	var pts []budget.Point
	guess := 300 // a small first prompt
	for step := range 8 {
		if step > 0 {
			guess = budget.Next(pts, 1000, 300, math.MaxInt, step, 1)
		}
		p := budget.Point{Chars: guess, Tokens: count(guess)}
		if err := budget.Check(pts, p); err != nil {
			fmt.Println(err)
			return
		}
		pts = append(pts, p)
		fmt.Println(p)
		if p.Tokens == 1000 {
			break
		}
	}
	// Output:
	// 300 characters = 120 tokens
	// 1200 characters = 480 tokens
	// 2500 characters = 1000 tokens
}

package blocktext_test

import (
	"fmt"

	"github.com/anvilbench/anvil/capacity/internal/blocktext"
)

// Two requests that share their first block: 24-token blocks at 3
// characters per token are 72 characters; the first request's second
// block is cut to make room for its tail, the second request's blocks
// are followed by its own filler. Both prompts are exactly 3 characters
// per planned token.
func ExampleLayout_Text() {
	layout := blocktext.Layout{BlockTokens: 24, Sizing: blocktext.CharsPerToken(3)}
	for i, p := range []blocktext.Prompt{
		{Blocks: []int64{0, 1}, Tokens: 36, Own: "request 0", Tail: "\n# request 0: summarize."},
		{Blocks: []int64{0, 2}, Tokens: 60, Own: "request 1", Tail: "\n# request 1: summarize."},
	} {
		text, err := layout.Text(p)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("request %d, %d characters:\n%s\n\n", i, len(text), text)
	}
	// Output:
	// request 0, 108 characters:
	// A0000000000000000000
	// def block_line():
	//     return compute(line)  # shar
	// B10000000000
	// # request 0: summarize.
	//
	// request 1, 180 characters:
	// A0000000000000000000
	// def block_line():
	//     return compute(line)  # shar
	// C2000000000000000000
	// def block_line():
	//     return compute(line)  # shar
	// #request 1
	// d
	// # request 1: summarize.
}

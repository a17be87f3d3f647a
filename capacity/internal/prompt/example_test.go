package prompt_test

import (
	"fmt"

	"github.com/anvilbench/anvil/capacity/internal/prompt"
)

// A unique-mode prompt of 200 characters: the request's header, filler
// lines, and the closing instruction naming request 2.
func ExampleLayout_Append() {
	l, err := prompt.New(prompt.Config{Unique: true, Nonce: "r1", PrefixChars: 60})
	if err != nil {
		fmt.Println(err)
		return
	}
	text, err := l.Append(nil, 2, 2, 66, 200, prompt.Measured)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d characters:\n%s\n", len(text), text)
	// Output:
	// 200 characters:
	// # request-specific prefix for request 2 of run r1
	// def helper
	// def helper_2():
	//     return compute(0)  # routine specialist context
	// def helper_3():
	//     retur
	// # request 2: summarize the above in one line.
}

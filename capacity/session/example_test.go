package session_test

import (
	"fmt"

	"github.com/anvilbench/anvil/capacity/session"
)

// A workload of 3-turn sessions from its compact form: each turn's
// planned prompt grows by the user message and the previous answer, and
// the exponential think times are fixed by the seed.
func ExampleParseSpec() {
	spec, err := session.ParseSpec("turns=3,user=200,output=128,think=2s,think_dist=exp,seed=7")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(spec)
	for turn := 1; turn <= spec.Turns; turn++ {
		fmt.Printf("turn %d: planned prompt %d tokens, think %v before it\n",
			turn, spec.PlannedPrompt(turn), spec.ThinkTime(0, turn))
	}
	_, err = session.ParseSpec("turns=3,user=200,output=0")
	fmt.Println(err)
	// Output:
	// turns=3,user=200,output=128,think=2s,think_dist=exp,seed=7
	// turn 1: planned prompt 200 tokens, think 0s before it
	// turn 2: planned prompt 528 tokens, think 4.737858231s before it
	// turn 3: planned prompt 856 tokens, think 185.877439ms before it
	// session: output = 0: must be in [1, 1000000] tokens
}

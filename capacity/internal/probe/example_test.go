package probe_test

import (
	"fmt"

	"github.com/anvilbench/anvil/capacity/internal/probe"
)

// Each probe asks for one word, naming itself so that no two share a
// cached answer.
func ExampleMessage() {
	fmt.Println(probe.Message(3))
	// Output: anvil probe request 3: reply with one word.
}

package reporters_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/reporters"
)

// Compare refuses runs that are not one workload; its error lists every
// identity key at fault, each a Difference with both values.
func ExampleNotComparableError() {
	data, err := os.ReadFile("../testdata/seed-capacity-v4-reasoning.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	old, err := artifact.Read(bytes.NewReader(data))
	if err != nil {
		fmt.Println(err)
		return
	}
	// The same run, as if it had asked for half the context.
	changed := bytes.Replace(data, []byte(`"context_tokens": 65536,`), []byte(`"context_tokens": 32768,`), 1)
	new, err := artifact.Read(bytes.NewReader(changed))
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = reporters.Compare([]*artifact.Report{old}, []*artifact.Report{new})
	var nc *reporters.NotComparableError
	if errors.As(err, &nc) {
		for _, d := range nc.Diffs {
			fmt.Printf("%s: %s %v, %s %v (%s)\n", d.Key, nc.Sides[0], d.Old, nc.Sides[1], d.New, d.Problem)
		}
	}
	// Output:
	// context_tokens: old [65536], new [32768] (differs)
}

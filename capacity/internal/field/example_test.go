package field_test

import (
	"errors"
	"fmt"

	"github.com/anvilbench/anvil/capacity/internal/field"
)

// A bad value is one *field.Error: its message names the package, the
// field, the value and the rule; errors.Is matches its Kind and errors.As
// gives the fields to a caller that wants to know which knob is wrong.
func ExampleError() {
	errInvalid := errors.New("capacity: invalid configuration")
	var err error = &field.Error{Pkg: "capacity", Field: "Workload.Concurrency", Value: 0,
		Rule: "must be in 1..16384", Kind: errInvalid}
	wrapped := fmt.Errorf("run: %w", err)

	fmt.Println(wrapped)
	fmt.Println(errors.Is(wrapped, errInvalid))
	var fe *field.Error
	if errors.As(wrapped, &fe) {
		fmt.Println(fe.Field, fe.Value)
	}
	// Output:
	// run: capacity: Workload.Concurrency = 0: must be in 1..16384
	// true
	// Workload.Concurrency 0
}

package field_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/internal/field"
	"github.com/anvilbench/anvil/capacity/trace"
)

// A bad value is one *field.Error (a *capacity.FieldError to users): its
// message names the package, where the value was, the field, the value and
// the rule; errors.Is matches its Kind and errors.As gives the fields, as
// either type, to a caller that wants to know which knob is wrong. The
// errors are real ones: a Workload's and a trace row's.
func ExampleError() {
	_, err := capacity.Workload{Concurrency: 20000}.Resolved()
	fmt.Println(err)
	fmt.Println(errors.Is(err, capacity.ErrInvalidConfig))
	if fe, ok := errors.AsType[*field.Error](err); ok {
		fmt.Println(fe.Field, fe.Value)
	}

	r := trace.NewReader(strings.NewReader(
		`{"timestamp": 0, "input_length": 20, "output_length": 5, "hash_ids": []}`+"\n"+
			`{"timestamp": 10, "input_length": -3, "output_length": 5, "hash_ids": []}`+"\n"), "conv_mooncake.jsonl")
	for r.Scan() {
	}
	err = fmt.Errorf("replay: %w", r.Err())
	fmt.Println(err)
	if fe, ok := errors.AsType[*capacity.FieldError](err); ok {
		fmt.Println(fe.Where, fe.Field, fe.Value)
	}
	// Output:
	// capacity: Workload.Concurrency = 20000: must be in 1..16384
	// true
	// Workload.Concurrency 20000
	// replay: trace: conv_mooncake.jsonl:2: input_length = "-3": must be an integer in [1, 10000000]
	// conv_mooncake.jsonl:2 input_length -3
}

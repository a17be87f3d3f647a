package capacity_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/trace"
)

// Resolved fills in the reference defaults; None says "none" where the
// zero value would mean the default, and stays None in the result. A bad
// value is a *FieldError wrapping ErrInvalidConfig.
func ExampleWorkload_Resolved() {
	w, err := capacity.Workload{Concurrency: 4, SharedPrefixTokens: capacity.None}.Resolved()
	fmt.Println(w.Requests, w.Concurrency, w.MaxTokens, w.SharedPrefixTokens, w.Timeout, w.PromptCacheMode, err)

	_, err = capacity.Workload{Concurrency: 20000}.Resolved()
	fmt.Println(err)
	fmt.Println(errors.Is(err, capacity.ErrInvalidConfig))
	var fe *capacity.FieldError
	if errors.As(err, &fe) {
		fmt.Println(fe.Field, fe.Value)
	}
	// Output:
	// 60 4 1024 -1 15m0s shared <nil>
	// capacity: Workload.Concurrency = 20000: must be in 1..16384
	// true
	// Workload.Concurrency 20000
}

// A bad value is a *FieldError, whichever package found it: here a
// Workload field and a trace row (package trace), each matched with
// errors.As and its Kind with errors.Is.
func ExampleFieldError() {
	_, err := capacity.Workload{Concurrency: 20000}.Resolved()
	fmt.Println(err)
	if fe, ok := errors.AsType[*capacity.FieldError](err); ok {
		fmt.Printf("%s %q = %v: %s\n", fe.Pkg, fe.Field, fe.Value, fe.Rule)
	}

	r := trace.NewReader(strings.NewReader(
		`{"timestamp": 0, "input_length": 20, "output_length": 5, "hash_ids": []}`+"\n"+
			`{"timestamp": 10, "input_length": -3, "output_length": 5, "hash_ids": []}`+"\n"), "conv_mooncake.jsonl")
	for r.Scan() {
	}
	fmt.Println(r.Err())
	if fe, ok := errors.AsType[*capacity.FieldError](r.Err()); ok {
		fmt.Printf("%s %s %q = %v: %s\n", fe.Pkg, fe.Where, fe.Field, fe.Value, fe.Rule)
	}
	// Output:
	// capacity: Workload.Concurrency = 20000: must be in 1..16384
	// capacity "Workload.Concurrency" = 20000: must be in 1..16384
	// trace: conv_mooncake.jsonl:2: input_length = "-3": must be an integer in [1, 10000000]
	// trace conv_mooncake.jsonl:2 "input_length" = -3: must be an integer in [1, 10000000]
}

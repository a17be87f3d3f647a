package capacity_test

import (
	"errors"
	"fmt"

	"github.com/anvilbench/anvil/capacity"
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

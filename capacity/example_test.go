package capacity_test

import (
	"errors"
	"fmt"

	"github.com/anvilbench/anvil/capacity"
)

// The contexts the reference tool attempts for seed 1717: one draw of
// Python's random.Random(1717).random() per request, mapped to buckets.
func ExampleSampleContexts() {
	fmt.Println(capacity.SampleContexts(1717, 8))
	// Output: [65536 32768 131072 16000 32768 65536 32768 32768]
}

// A plan fixes every request's context before the run; each worker then
// builds its prompts into one reused buffer.
func ExamplePlan_AppendPrompt() {
	w := capacity.Workload{Requests: 3, ContextTokens: 60, SharedPrefixTokens: 25, RequestCanaries: true, Seed: 7}
	plan, err := capacity.NewPlan(w, 8192, capacity.DefaultMargin, "")
	if err != nil {
		fmt.Println(err)
		return
	}
	var buf []byte
	buf, _ = plan.AppendPrompt(buf[:0], 2)
	fmt.Printf("%d characters for %d tokens\n%s\n", len(buf), plan.Contexts[2], buf)
	// Output:
	// 180 characters for 60 tokens
	// def helper_0():
	//     return compute(0)  # routine specialist context
	// def hel
	// def helper_
	// # request 2: begin your answer with ANVIL_REQ_7_00002, then summarize the above in one line.
}

// Resolved fills in the reference defaults; NoSharedPrefix says "none"
// where the zero value would mean the default.
func ExampleWorkload_Resolved() {
	w, err := capacity.Workload{Concurrency: 4, SharedPrefixTokens: capacity.NoSharedPrefix}.Resolved()
	fmt.Println(w.Requests, w.Concurrency, w.MaxTokens, w.SharedPrefixTokens, w.Timeout, w.PromptCacheMode, err)

	_, err = capacity.Workload{Concurrency: 300}.Resolved()
	fmt.Println(err)
	fmt.Println(errors.Is(err, capacity.ErrInvalidConfig))
	// Output:
	// 60 4 64 0 15m0s shared <nil>
	// capacity: Workload.Concurrency = 300: must be in 1..256
	// true
}

func ExampleCheckCanary() {
	marker := capacity.CanaryMarker(1717, 3)
	ok := capacity.CheckCanary(marker, marker+" The file defines helpers.", true)
	peer := capacity.CheckCanary(marker, marker+" see ANVIL_REQ_1717_00004", true)
	fmt.Println(ok.Marker, ok.Passed, peer.Passed, peer.ForeignMarkerCount)
	// Output: ANVIL_REQ_1717_00003 true false 1
}

func ExampleRedactBaseURL() {
	u, err := capacity.RedactBaseURL("https://user:secret@api.example.com/v1?key=abc")
	fmt.Println(u, err)
	// Output: https://api.example.com/v1 <nil>
}

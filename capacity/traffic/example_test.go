package traffic_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/trace"
	"github.com/anvilbench/anvil/capacity/traffic"
)

// A replay of four rows of the Mooncake conversation trace from a
// window opening at 28 s, ten times faster than recorded: what each
// request sends and when it is due. The run itself is
// capacity.Run(ctx, target, w).
func ExampleReplay() {
	f, err := os.Open("../../testdata/traces/mooncake-conversation_trace-first500.jsonl")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	r := trace.NewReader(f, f.Name(), trace.SpeedUp(10), trace.Window{Start: 28 * time.Second}, trace.First(4))
	var recs []trace.Record
	for r.Scan() {
		recs = append(recs, r.Record())
	}
	if err := r.Err(); err != nil {
		fmt.Println(err)
		return
	}
	replay := traffic.Replay{Records: recs, IgnoreEOS: true}
	w := replay.Workload(capacity.Workload{Concurrency: 16})
	fmt.Println("requests:", w.Requests)
	for i := range w.Requests {
		req, err := replay.Request(context.Background(), i)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("request %d: recorded at %v, due %v, %d prompt tokens in %d characters, max_tokens %d, min_tokens %s\n",
			i, recs[i].TraceOffset, recs[i].Offset, req.PromptTokens, len(req.Messages[0].Content), req.MaxTokens, req.Body["min_tokens"])
	}
	// Output:
	// requests: 4
	// request 0: recorded at 30s, due 200ms, 42722 prompt tokens in 128166 characters, max_tokens 464, min_tokens 464
	// request 1: recorded at 30s, due 200ms, 10500 prompt tokens in 31500 characters, max_tokens 34, min_tokens 34
	// request 2: recorded at 30s, due 200ms, 13616 prompt tokens in 40848 characters, max_tokens 492, min_tokens 492
	// request 3: recorded at 30s, due 200ms, 49902 prompt tokens in 149706 characters, max_tokens 549, min_tokens 549
}

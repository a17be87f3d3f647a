package capacity_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/anvilbench/anvil/capacity"
	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// ExampleWorkload_exactSizing sizes prompts with the server's /tokenize, so
// the server counts exactly the planned 4,096 tokens, against a fake that
// stalls every 5th gap between chunks for 200 ms: the chunk timing counts
// the stalls.
func ExampleWorkload_exactSizing() {
	cfg := fakeserver.Fast()
	cfg.Tokenizer = "words"
	cfg.StallEvery, cfg.StallFor, cfg.TokensPerChunk = 5, 200*time.Millisecond, 2
	srv := fakeserver.New(cfg)
	defer srv.Close()

	rep, err := capacity.Run(context.Background(),
		capacity.Target{BaseURL: srv.URL + "/v1", Engine: "fake", GPU: "none"},
		capacity.Workload{Requests: 4, Concurrency: 4, ContextTokens: 4096, MaxTokens: 32, PromptSizing: "exact"})
	if err != nil {
		log.Fatal(err)
	}
	ps := rep.AnvilGo.PromptSizing
	fmt.Println("sizing:", ps.Method, "from", *ps.Source, *ps.TokenizePath)
	for _, row := range rep.RequestTimings {
		fmt.Println("request", row.RequestIndex, "planned", row.PlannedContextTokens, "counted", *row.PromptTokens)
	}
	ct := rep.AnvilGo.ChunkTiming
	fmt.Println("stalls:", ct.Stalls > 0, "several tokens per chunk:", *ct.TokensPerChunkMean > 1.5)
	// Output:
	// sizing: exact from tokenize /tokenize
	// request 0 planned 4096 counted 4096
	// request 1 planned 4096 counted 4096
	// request 2 planned 4096 counted 4096
	// request 3 planned 4096 counted 4096
	// stalls: true several tokens per chunk: true
}

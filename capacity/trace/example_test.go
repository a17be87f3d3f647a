package trace_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/anvilbench/anvil/capacity/trace"
)

// Replaying the first rows of the Mooncake conversation trace ten times
// faster than recorded: each row's offset is divided by ten, and its
// prompt blocks are named by the trace's hash_ids.
func ExampleReader() {
	f, err := os.Open("../../testdata/traces/mooncake-conversation_trace-first500.jsonl")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	r := trace.NewReader(f, f.Name(), trace.SpeedUp(10), trace.First(3))
	for r.Scan() {
		rec := r.Record()
		fmt.Printf("line %d at %v: %d prompt tokens in %d blocks of %d, max_tokens %d, blocks %v...\n",
			rec.Line, rec.Offset, rec.PromptTokens, len(rec.Blocks), rec.BlockTokens, rec.OutputTokens, rec.Blocks[:3])
	}
	if err := r.Err(); err != nil {
		fmt.Println(err)
		return
	}
	d, _ := r.Description()
	fmt.Printf("%s (%s): %d rows used, sha256 %s...\n", d.File, d.Format, d.Rows, d.SHA256[:12])
	// Output:
	// line 1 at 0s: 6758 prompt tokens in 14 blocks of 512, max_tokens 500, blocks [0 1 2]...
	// line 2 at 0s: 7322 prompt tokens in 15 blocks of 512, max_tokens 490, blocks [0 14 15]...
	// line 3 at 0s: 7236 prompt tokens in 15 blocks of 512, max_tokens 794, blocks [0 28 29]...
	// mooncake-conversation_trace-first500.jsonl (mooncake): 3 rows used, sha256 7f0f42025c3a...
}

// A malformed row ends the scan with an error naming the file, the line
// and the field.
func ExampleReader_Err() {
	log := `{"offset_ms": 0, "prompt_tokens": 900, "output_tokens": 32}
{"offset_ms": 10, "prompt_tokens": 0, "output_tokens": 32}
`
	r := trace.NewReader(strings.NewReader(log), "my-log.jsonl")
	for r.Scan() {
	}
	fmt.Println(r.Err())
	// Output:
	// trace: my-log.jsonl:2: prompt_tokens = "0": must be an integer in [1, 10000000]
}

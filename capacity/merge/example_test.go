package merge_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/anvilbench/anvil/capacity/merge"
)

// Merge the artifacts of the three shards of one workload into one
// artifact of the whole; leave one out and the merge names it.
func ExampleShards() {
	var shards []merge.Artifact
	for _, name := range []string{"shard-2.json", "shard-0.json", "shard-1.json"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "shards", name))
		if err != nil {
			fmt.Println(err)
			return
		}
		shards = append(shards, merge.Artifact{Name: name, Data: data})
	}
	merged, err := merge.Shards(shards...)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(merged.Requests, "requests,", merged.Completed, "succeeded, concurrency", merged.Concurrency)
	fmt.Printf("wall %.1f ms, ttft p99 %.3f ms, itl p99 %.3f ms over %d gaps\n", merged.WallClockMS,
		*merged.Metrics.TTFT.P99, merged.AnvilGo.ChunkTiming.ITLMS.P99, merged.AnvilGo.ChunkTiming.Gaps)
	for _, s := range merged.AnvilGo.Shards.Artifacts {
		fmt.Println("shard", s.Index, "on", s.Host)
	}
	f := merged.AnvilGo.Shards.InFlight // each shard kept the whole cap
	fmt.Printf("at most %d in flight across the shards (cap %d), %d sent over the cap\n", f.Peak, f.Cap, f.OverCapRequests)

	_, err = merge.Shards(shards[:2]...)
	fmt.Println(errors.Is(err, merge.ErrNotMergeable), err)
	// Output:
	// 24 requests, 24 succeeded, concurrency 5
	// wall 2078.1 ms, ttft p99 211.878 ms, itl p99 202.000 ms over 278 gaps
	// shard 0 on load-0
	// shard 1 on load-1
	// shard 2 on load-2
	// at most 5 in flight across the shards (cap 5), 0 sent over the cap
	// true merge: shard 1 of 3 is missing (have 0 (shard-0.json), 2 (shard-2.json)): the artifacts are not the shards of one workload
}

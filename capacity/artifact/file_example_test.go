package artifact_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// Read an artifact of any generation, inspect it, and write it back
// atomically: the file written has exactly the keys of the one read.
func ExampleRead() {
	f, err := os.Open(filepath.Join("..", "..", "testdata", "seed-capacity-v4-reasoning.json"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	r, err := artifact.Read(f)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.MeasurementProtocol, r.Requests, "requests")
	fmt.Printf("ttft p50 %.1f ms, decode p50 %.1f tok/s\n", *r.Metrics.TTFT.P50, *r.Metrics.DecodeTokS.P50)

	dir, err := os.MkdirTemp("", "anvil-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	if err := r.WriteFile(filepath.Join(dir, "copy.json")); err != nil {
		fmt.Println(err)
	}
	// Output:
	// capacity-v4-reasoning 6 requests
	// ttft p50 8953.2 ms, decode p50 232.0 tok/s
}

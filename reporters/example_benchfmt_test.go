package reporters_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/anvilbench/anvil/reporters"
)

// Convert an artifact to the Go benchmark format, for benchstat.
func ExampleWriteBenchfmt() {
	data, err := os.ReadFile("../testdata/seed-capacity-v4-reasoning.json")
	if err != nil {
		panic(err)
	}
	r, err := reporters.ReadJSON(bytes.NewReader(data))
	if err != nil {
		panic(err)
	}
	var out strings.Builder
	if err := reporters.WriteBenchfmt(&out, r); err != nil {
		panic(err)
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "Benchmark") {
			f := strings.Fields(line)
			fmt.Println(f[0], f[1], "requests;", f[12], f[13])
		}
	}
	// Output:
	// BenchmarkCapacity/ctx=65536/conc=1 6 requests; 231.96481822725846 decode-tok/s
}

// Print the console summary of an artifact.
func ExampleWriteSummary() {
	data, err := os.ReadFile("../testdata/seed-capacity-v4-reasoning.json")
	if err != nil {
		panic(err)
	}
	r, err := reporters.ReadJSON(bytes.NewReader(data))
	if err != nil {
		panic(err)
	}
	var out strings.Builder
	if err := reporters.WriteSummary(&out, r); err != nil {
		panic(err)
	}
	fmt.Println(strings.Split(out.String(), "\n")[3])
	// Output:
	// requests 6  succeeded 6  failed 0  performance eligible true
}

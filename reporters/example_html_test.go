package reporters_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/reporters"
)

// ExampleWriteHTML writes the page of one artifact and counts its charts:
// four latency CDFs, TTFT against prompt tokens and the request timeline.
func ExampleWriteHTML() {
	f, err := os.Open("../testdata/seed-capacity-v4-reasoning.json")
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
	var page bytes.Buffer
	if err := reporters.WriteHTML(&page, r); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(strings.Count(page.String(), `<svg class="chart"`), "charts")
	// Output: 6 charts
}

// ExampleCompare compares the seed run with itself: one workload, so the
// comparison succeeds, and one run a side cannot be tested.
func ExampleCompare() {
	f, err := os.Open("../testdata/seed-capacity-v4-reasoning.json")
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
	c, err := reporters.Compare([]*artifact.Report{r}, []*artifact.Report{r})
	if err != nil {
		fmt.Println(err)
		return
	}
	m := c.Metrics[0]
	fmt.Printf("%s: old %.0f ms, new %.0f ms, delta %.1f%%, %s\n", m.Name, m.OldCenter, m.NewCenter, m.DeltaPct, m.Note)
	// Output: TTFT p50: old 8953 ms, new 8953 ms, delta 0.0%, significance needs >= 2 runs per side
}

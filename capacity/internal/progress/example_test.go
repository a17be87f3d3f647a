package progress_test

import (
	"fmt"
	"time"

	"github.com/anvilbench/anvil/capacity/internal/progress"
)

// The oldest request in flight, whichever ends first.
func ExampleFlights() {
	var f progress.Flights
	t0 := time.Unix(0, 0)
	f.Out(0, t0)
	f.Out(1, t0.Add(2*time.Second))
	f.Back(0)
	fmt.Println(f.Oldest(t0.Add(5 * time.Second)))
	// Output: 3s
}

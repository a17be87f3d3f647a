package contextdraw_test

import (
	"fmt"

	"github.com/anvilbench/anvil/capacity/internal/contextdraw"
)

// The first contexts the reference tool plans for seed 1717.
func ExampleSample() {
	fmt.Println(contextdraw.Sample(1717, 4))
	// Output: [65536 32768 131072 16000]
}

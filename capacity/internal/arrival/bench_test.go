package arrival

import (
	"fmt"
	"testing"
)

// BenchmarkSchedule measures Schedule for n = 100,000 offsets, the whole
// cost of planning a long run: one 800 kB allocation and n-1 draws.
func BenchmarkSchedule(b *testing.B) {
	const n = 100_000
	for _, s := range []Spec{
		{Process: Constant, Rate: 100},
		{Process: Poisson, Rate: 100, Seed: 1},
		{Process: Gamma, Rate: 100, Burstiness: 0.25, Seed: 1},
		{Process: Gamma, Rate: 100, Burstiness: 4, Seed: 1},
	} {
		b.Run(fmt.Sprintf("%s/b=%g", s.Process, s.Burstiness), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				offsets, err := Schedule(s, n)
				if err != nil || len(offsets) != n {
					b.Fatalf("Schedule: %d offsets, %v", len(offsets), err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/offset")
		})
	}
}

package steady

import "testing"

// BenchmarkFind is the test's cost on a long closed loop: 20,000 requests
// over an hour, 1,000 bins (the Mann-Kendall test, quadratic in the bins,
// dominates).
func BenchmarkFind(b *testing.B) {
	in := Input{Load: InFlight, Concurrency: 16, PhaseMS: 3600e3}
	for i := range 20000 {
		at := float64(i) * 180
		in.Requests = append(in.Requests, Request{At: at, Sent: at, End: at + 2880 + float64(i%13), OK: true, TTFT: 40 + float64(i%7)})
	}
	b.ReportAllocs()
	for b.Loop() {
		if w := Find(in); w.Bins != 1000 {
			b.Fatalf("%d bins", w.Bins)
		}
	}
}

package capacity

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/client"
	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// BenchmarkFidelity measures, on the real clock, how far the client's
// timings are from the fake server's ground truth over loopback TCP with
// the default transport, at concurrency 1, 64 and 256. The error of a
// request is the client's TTFO, TTFT or E2E minus the server's write time
// of the same byte, measured from the request's arrival: it is what the
// client adds (request transfer, connection handling, delivery and parsing).
// The generation error (client E2E - TTFO against the server's last minus
// first write) leaves out the request's way to the server and isolates the
// stamping of stream events. Warm-up requests open the connections first.
// The errors are reported as metrics, never asserted.
func BenchmarkFidelity(b *testing.B) {
	for _, c := range []int{1, 64, 256} {
		b.Run(fmt.Sprintf("c=%d", c), func(b *testing.B) {
			b.ReportAllocs()
			var ttfo, ttft, e2e, gen []float64
			seed := int64(0)
			for b.Loop() {
				seed++
				srv := fakeserver.New(fakeserver.Fast())
				rep, err := Run(b.Context(), Target{BaseURL: srv.URL + "/v1"},
					Workload{Requests: 2 * c, Concurrency: c, Warmup: c, Seed: seed, ContextTokens: 2048, RequestCanaries: true})
				srv.Close()
				require.NoError(b, err)
				require.Empty(b, rep.Failures)
				traces := tracesByIndex(b, srv, seed)
				for _, row := range rep.RequestTimings {
					tr := traces[row.RequestIndex]
					ttfo = append(ttfo, row.TimeToFirstOutputMS-client.MS(tr.FirstReasoning))
					ttft = append(ttft, row.TTFTMS-client.MS(tr.FirstContent))
					e2e = append(e2e, row.E2EMS-client.MS(tr.Last))
					gen = append(gen, row.GenerationMS-client.MS(tr.Last-tr.FirstReasoning))
				}
			}
			report := func(name string, errs []float64) {
				sum, worst := 0.0, 0.0
				for _, e := range errs {
					sum += e
					worst = math.Max(worst, math.Abs(e))
				}
				b.ReportMetric(sum/float64(len(errs))*1000, name+"-err-mean-us")
				b.ReportMetric(worst*1000, name+"-err-max-us")
			}
			report("ttfo", ttfo)
			report("ttft", ttft)
			report("e2e", e2e)
			report("generation", gen)
		})
	}
}

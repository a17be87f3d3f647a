//go:build unix

package perfbench

import (
	"net/http"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
)

// The runs of BenchmarkCPUPerRequest: as many requests of one content
// event as perRequestMany, less as many as perRequestFew, at concurrency
// perRequestConcurrency.
const (
	perRequestFew         = 20
	perRequestMany        = 420
	perRequestConcurrency = 4
)

// BenchmarkCPUPerRequest is the CPU time the client spends on a request
// apart from its chunks, beside the floor's (Floor), measured in turn in
// one process against the same server: each reader's CPU for
// perRequestMany requests of one content event less its CPU for
// perRequestFew, over the requests between. What a run does once (its
// plan's fixed part, warming its connections, its report's fixed part)
// cancels; what is left is a request's own work: its prompt and body, the
// write, the response head, the stream's first and last events, its row
// of the report. In a burst this is the CPU the streams' first events
// queue behind (BenchmarkOwnError at c >= 64), so it bounds the client's
// own error there.
//
// Each iteration measures both readers, in alternating order; the results
// are medians over the iterations: cpu-us/request (the client),
// floor-cpu-us/request, floor-ratio (the median of the iterations'
// client/floor ratios), and, of the client's last pair of runs,
// allocs/request and bytes/request, the allocations of a request (the
// larger run's less the smaller's, over the requests between).
func BenchmarkCPUPerRequest(b *testing.B) {
	base := startServer(b, Schedule{Chunks: 1, PromptTokens: 64})
	target := capacity.Target{BaseURL: base, Model: "perf", MaxModelLen: 1 << 20}
	workload := func(requests int) capacity.Workload {
		return capacity.Workload{Requests: requests, Concurrency: perRequestConcurrency, ContextTokens: 64,
			SharedPrefixTokens: capacity.None, MaxTokens: 1}
	}
	type cost struct {
		cpu            float64 // ns
		mallocs, bytes float64
	}
	client := func(requests int) cost {
		var before, after runtime.MemStats
		runtime.GC() // an earlier run's garbage is not this run's
		runtime.ReadMemStats(&before)
		c0 := cpuTime(b)
		rep, err := capacity.Run(b.Context(), target, workload(requests))
		cpu := cpuTime(b) - c0
		runtime.ReadMemStats(&after)
		require.NoError(b, err)
		require.Empty(b, rep.Failures)
		require.Equal(b, requests, rep.Metrics.ContentChunks)
		return cost{cpu: float64(cpu), mallocs: float64(after.Mallocs - before.Mallocs),
			bytes: float64(after.TotalAlloc - before.TotalAlloc)}
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: perRequestConcurrency}}
	defer hc.CloseIdleConnections()
	body := []byte(`{"model":"perf","messages":[{"role":"user","content":"count"}],"stream":true,"max_tokens":1}`)
	floor := func(requests int) float64 {
		runtime.GC()
		c0 := cpuTime(b)
		lines, err := Floor(b.Context(), hc, base+"/chat/completions", body, requests, perRequestConcurrency)
		cpu := cpuTime(b) - c0
		require.NoError(b, err)
		require.Positive(b, lines)
		return float64(cpu)
	}
	const between = perRequestMany - perRequestFew
	// One run of each first: connections, buffers and code paths are warm.
	client(perRequestFew)
	floor(perRequestFew)

	var clientUS, floorUS, ratios []float64
	var last cost
	for i := 0; b.Loop(); i++ {
		var c, f float64
		clientOnce := func() {
			many, few := client(perRequestMany), client(perRequestFew)
			last = cost{cpu: many.cpu - few.cpu, mallocs: many.mallocs - few.mallocs, bytes: many.bytes - few.bytes}
			c = last.cpu / between / 1e3
		}
		floorOnce := func() { f = (floor(perRequestMany) - floor(perRequestFew)) / between / 1e3 }
		if i%2 == 0 {
			clientOnce()
			floorOnce()
		} else {
			floorOnce()
			clientOnce()
		}
		clientUS, floorUS, ratios = append(clientUS, c), append(floorUS, f), append(ratios, c/f)
	}
	b.Logf("load average %s; per iteration: client %.1f us, floor %.1f us a request, ratios %.2f", loadAverage(), clientUS, floorUS, ratios)
	b.ReportMetric(median(clientUS), "cpu-us/request")
	b.ReportMetric(median(floorUS), "floor-cpu-us/request")
	b.ReportMetric(median(ratios), "floor-ratio")
	b.ReportMetric(last.mallocs/between, "allocs/request")
	b.ReportMetric(last.bytes/between, "bytes/request")
}

//go:build unix

package perfbench

import (
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
)

// BenchmarkCPUPerChunk is the CPU time the client spends per streamed chunk
// beside the floor's, the minimal reader (Floor), measured in turn in one
// process against the same servers: 20 requests of 20,000 content chunks
// each at concurrency 4, written as fast as the connection takes them by
// a server in another process. Startup is subtracted: each reader's CPU
// for the 20 requests of one chunk (connections, request bodies, headers,
// the run's plan and report) is taken from its CPU for the 20 requests of
// 20,000, and the rest divided by the 20 x 19,999 chunks between, so the
// figure is what a chunk costs. The client runs without warm-up requests
// (its connections are still warmed before the clock).
//
// Each iteration measures both readers, in alternating order, and the
// results are medians over the iterations: cpu-ns/chunk (the client),
// floor-cpu-ns/chunk, and floor-ratio, the median of the iterations'
// client/floor ratios (each of two runs a few hundred milliseconds
// apart, so that a change in the machine's load moves both). Beside them,
// of the client's last full run: allocs/chunk and bytes/chunk (the
// process's allocations over its chunks, each request's setup spread over
// them), gc/run, and marginal-allocs/chunk, what the last 10,000 chunks of
// each stream allocate per chunk (a run of 20,000-chunk streams minus one
// of 10,000-chunk streams, over the 200,000 chunks between): 0 when
// nothing on the per-chunk path allocates.
func BenchmarkCPUPerChunk(b *testing.B) {
	full, half, one := cpuServers(b)
	cpuPerChunk(b, full, half, one, framings[0], "")
}

// BenchmarkCPUPerEvent is BenchmarkCPUPerChunk over each streamed API
// (Target.API), one sub-benchmark each, chat's beside the others in one
// process against the same servers: the CPU time and the allocations of
// one content event of each dialect, and the floor's of the same bytes
// (the floor counts the data lines of any framing).
func BenchmarkCPUPerEvent(b *testing.B) {
	full, half, one := cpuServers(b)
	for i, api := range streamedAPIs {
		b.Run("api="+api, func(b *testing.B) { cpuPerChunk(b, full, half, one, framings[i], api) })
	}
}

// streamedAPIs are the streamed APIs (Target.API) of the per-API
// benchmarks, each spoken in framings[i].
var streamedAPIs = []string{"chat", "completions", "responses", "messages"}

// cpuChunks is the content events of each request of the CPU benchmarks.
const cpuChunks = 20000

// cpuServers starts the servers of the CPU benchmarks: streams of
// cpuChunks content events, of half as many, and of one.
func cpuServers(b *testing.B) (full, half, one string) {
	return startServer(b, Schedule{Chunks: cpuChunks, PromptTokens: 64}),
		startServer(b, Schedule{Chunks: cpuChunks / 2, PromptTokens: 64}),
		startServer(b, Schedule{Chunks: 1, PromptTokens: 64})
}

// cpuPerChunk measures the client speaking api (framing f) against the
// servers full, half and one, and the floor reading the same streams.
func cpuPerChunk(b *testing.B, full, half, one string, f framing, api string) {
	const requests, chunks, concurrency = 20, cpuChunks, 4
	w := capacity.Workload{Requests: requests, Concurrency: concurrency, ContextTokens: 64,
		SharedPrefixTokens: capacity.None, MaxTokens: chunks}
	target := func(base string) capacity.Target {
		return capacity.Target{BaseURL: base, Model: "perf", MaxModelLen: 1 << 20, API: api}
	}
	// The data lines a stream has beside its content events.
	framingLines := strings.Count(f.head+f.tail(64, chunks), "data: ")
	// clientRun is what one client run cost.
	type clientRun struct {
		cpu            time.Duration
		mallocs, bytes uint64
		gcs            uint32
	}
	// client runs the client against base.
	client := func(base string, want int) clientRun {
		var before, after runtime.MemStats
		runtime.GC() // an earlier run's garbage is not this run's
		runtime.ReadMemStats(&before)
		c0 := cpuTime(b)
		rep, err := capacity.Run(b.Context(), target(base), w)
		cpu := cpuTime(b) - c0
		runtime.ReadMemStats(&after)
		require.NoError(b, err)
		require.Empty(b, rep.Failures)
		require.Equal(b, requests*want, rep.Metrics.ContentChunks)
		return clientRun{cpu: cpu, mallocs: after.Mallocs - before.Mallocs,
			bytes: after.TotalAlloc - before.TotalAlloc, gcs: after.NumGC - before.NumGC}
	}
	// The floor's transport keeps as many idle connections as it has
	// requests in flight, as the client's does.
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrency}}
	defer hc.CloseIdleConnections()
	body := []byte(`{"model":"perf","messages":[{"role":"user","content":"count"}],"stream":true,"max_tokens":` + strconv.Itoa(chunks) + `}`)
	floor := func(base string, want int) time.Duration {
		runtime.GC()
		c0 := cpuTime(b)
		lines, err := Floor(b.Context(), hc, base+strings.TrimPrefix(f.path, "/v1"), body, requests, concurrency)
		cpu := cpuTime(b) - c0
		require.NoError(b, err)
		require.Equal(b, requests*(want+framingLines), lines, "content and framing lines")
		return cpu
	}
	perChunk := func(full, one time.Duration) float64 {
		return float64(full-one) / float64(requests*(chunks-1))
	}
	// One run of each first: connections, buffers and the code paths are warm.
	client(full, chunks)
	floor(full, chunks)
	client(half, chunks/2)
	marginal := float64(client(full, chunks).mallocs) - float64(client(half, chunks/2).mallocs)

	var clientNS, floorNS, ratios []float64
	var last clientRun
	for i := 0; b.Loop(); i++ {
		var c, f float64
		clientOnce := func() {
			last = client(full, chunks)
			c = perChunk(last.cpu, client(one, 1).cpu)
		}
		floorOnce := func() { f = perChunk(floor(full, chunks), floor(one, 1)) }
		if i%2 == 0 {
			clientOnce()
			floorOnce()
		} else {
			floorOnce()
			clientOnce()
		}
		clientNS, floorNS, ratios = append(clientNS, c), append(floorNS, f), append(ratios, c/f)
	}
	b.Logf("load average %s; per iteration: client %.0f ns, floor %.0f ns a chunk, ratios %.2f", loadAverage(), clientNS, floorNS, ratios)
	b.ReportMetric(median(clientNS), "cpu-ns/chunk")
	b.ReportMetric(median(floorNS), "floor-cpu-ns/chunk")
	b.ReportMetric(median(ratios), "floor-ratio")
	b.ReportMetric(float64(last.mallocs)/float64(requests*chunks), "allocs/chunk")
	b.ReportMetric(float64(last.bytes)/float64(requests*chunks), "bytes/chunk")
	b.ReportMetric(float64(last.gcs), "gc/run")
	b.ReportMetric(marginal/float64(requests*chunks/2), "marginal-allocs/chunk")
}

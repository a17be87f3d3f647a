//go:build unix

package perfbench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
)

// TestMain serves instead of testing when the benchmarks re-execute the
// test binary as their separate-process server.
func TestMain(m *testing.M) {
	if spec := os.Getenv(ServerEnv); spec != "" {
		raiseFileLimit()
		if err := Serve(context.Background(), spec, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// raiseFileLimit raises the soft open-file limit to the hard limit, for a
// server holding thousands of connections.
func raiseFileLimit() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil && l.Cur < l.Max {
		l.Cur = l.Max
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
}

// startServer starts the server of s in a child process and returns its
// base URL; the child ends with the benchmark.
func startServer(tb testing.TB, s Schedule) string {
	tb.Helper()
	spec, err := json.Marshal(s)
	require.NoError(tb, err)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), ServerEnv+"="+string(spec))
	stdin, err := cmd.StdinPipe()
	require.NoError(tb, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(tb, err)
	// What the server writes to stderr is logged when it ends, never
	// printed between a result's name and its numbers.
	var serverErr bytes.Buffer
	cmd.Stderr = &serverErr
	require.NoError(tb, cmd.Start())
	tb.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if serverErr.Len() > 0 {
			tb.Logf("the server process wrote to stderr:\n%s", serverErr.String())
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(tb, err, "the server process did not start")
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	require.True(tb, ok, "unexpected first line %q", line)
	go io.Copy(io.Discard, stdout)
	return addr + "/v1"
}

// cpuTime is the process's user + system CPU time so far.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	require.NoError(tb, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCPUPerChunk is the client's whole-process CPU time per streamed
// chunk: 20 requests of 20,000 content chunks each at concurrency 4,
// against a server in another process that writes them as fast as the
// connection takes them. Reported: cpu-ns/chunk, allocs/chunk, bytes/chunk
// and the GC cycles of one run; marginal-allocs/chunk is what the last
// 10,000 chunks of each stream allocate, per chunk (the process's
// allocations of a run of 20,000-chunk streams minus those of a run of
// 10,000-chunk streams against a second server, over the 200,000 chunks
// between): 0 when nothing on the per-chunk path allocates, whereas
// allocs/chunk also spreads each request's setup over its chunks.
func BenchmarkCPUPerChunk(b *testing.B) {
	const requests, chunks = 20, 20000
	base := startServer(b, Schedule{Chunks: chunks, PromptTokens: 64})
	half := startServer(b, Schedule{Chunks: chunks / 2, PromptTokens: 64})
	t := capacity.Target{BaseURL: base, Model: "perf", MaxModelLen: 1 << 20}
	w := capacity.Workload{Requests: requests, Concurrency: 4, ContextTokens: 64,
		SharedPrefixTokens: capacity.None, MaxTokens: chunks, Warmup: 4}
	// One run first: connections, buffers and the code paths are warm.
	_, err := capacity.Run(b.Context(), t, w)
	require.NoError(b, err)
	mallocs := func(t capacity.Target, want int) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		rep, err := capacity.Run(b.Context(), t, w)
		runtime.ReadMemStats(&after)
		require.NoError(b, err)
		require.Equal(b, requests*want, rep.Metrics.ContentChunks)
		return after.Mallocs - before.Mallocs
	}
	th := t
	th.BaseURL = half
	mallocs(th, chunks/2)
	marginal := float64(mallocs(t, chunks)) - float64(mallocs(th, chunks/2))
	b.ReportAllocs()
	var cpu time.Duration
	var before, after runtime.MemStats
	var gcs uint32
	for b.Loop() {
		runtime.ReadMemStats(&before)
		c0 := cpuTime(b)
		rep, err := capacity.Run(b.Context(), t, w)
		cpu += cpuTime(b) - c0
		runtime.ReadMemStats(&after)
		require.NoError(b, err)
		require.Empty(b, rep.Failures)
		require.Equal(b, requests*chunks, rep.Metrics.ContentChunks)
		gcs += after.NumGC - before.NumGC
	}
	total := float64(b.N * requests * chunks)
	b.ReportMetric(float64(cpu.Nanoseconds())/total, "cpu-ns/chunk")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(requests*chunks), "allocs/chunk")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(requests*chunks), "bytes/chunk")
	b.ReportMetric(float64(gcs)/float64(b.N), "gc/run")
	b.ReportMetric(marginal/float64(requests*chunks/2), "marginal-allocs/chunk")
}

// BenchmarkTimingError measures the client's TTFT and TPOT against a server
// in another process with an exact schedule (TTFT 50 ms, one chunk every
// 5 ms, 20 chunks), at concurrency 1, 64, 256 and 1024: the error of a
// request is its TTFT minus 50 ms (what the client adds: connection,
// request transfer, delivery, parsing, scheduling) and its TPOT minus 5 ms.
// Each run first warms as many connections as it keeps in flight.
// Reported: p50, p95 and max of the errors in ms.
func BenchmarkTimingError(b *testing.B) {
	const ttft, gap, chunks = 50 * time.Millisecond, 5 * time.Millisecond, 20
	base := startServer(b, Schedule{TTFT: ttft, Gap: gap, Chunks: chunks, PromptTokens: 64})
	for _, c := range []int{1, 64, 256, 1024} {
		b.Run("c="+itoa(c), func(b *testing.B) {
			if _, err := (capacity.Workload{Concurrency: c}).Resolved(); err != nil {
				b.Skipf("concurrency %d: %v", c, err)
			}
			t := capacity.Target{BaseURL: base, Model: "perf", MaxModelLen: 1 << 20}
			w := capacity.Workload{Requests: 2 * c, Concurrency: c, Warmup: c, ContextTokens: 64,
				SharedPrefixTokens: capacity.None, MaxTokens: chunks}
			var ttftErr, tpotErr []float64
			for b.Loop() {
				rep, err := capacity.Run(b.Context(), t, w)
				require.NoError(b, err)
				require.Empty(b, rep.Failures)
				for _, row := range rep.RequestTimings {
					ttftErr = append(ttftErr, row.TTFTMS-float64(ttft)/1e6)
					if row.TPOTMS != nil {
						tpotErr = append(tpotErr, *row.TPOTMS-float64(gap)/1e6)
					}
				}
			}
			reportQuantiles(b, "ttft-err", ttftErr)
			reportQuantiles(b, "tpot-err", tpotErr)
		})
	}
}

// reportQuantiles reports the nearest-rank p50 and p95 and the max of xs.
func reportQuantiles(b *testing.B, name string, xs []float64) {
	if len(xs) == 0 {
		return
	}
	slices.Sort(xs)
	rank := func(p float64) float64 { return xs[max(0, int(math.Ceil(p*float64(len(xs))/100))-1)] }
	b.ReportMetric(rank(50), name+"-p50-ms")
	b.ReportMetric(rank(95), name+"-p95-ms")
	b.ReportMetric(xs[len(xs)-1], name+"-max-ms")
}

// BenchmarkMemoryPerStream holds many streams open at once (the server
// waits 3 s before the first token) and samples the client process's
// resident memory every 10 ms over the whole run (connection warm-up,
// request bodies, the streams): rss-KiB/stream is the peak's growth over
// the idle process (its freed memory returned first), divided by the
// streams, and rss-MiB the growth in total; inflight-KiB/stream is the
// growth sampled when the progress callback first sees every stream in
// flight (the earlier form of this measure, which a client that dials
// lazily flatters: not every connection exists yet then). Two shapes:
// 10,000 streams of small prompts, and 512 streams of 131,072-token
// prompts, the most the protocol's cap on planned prompt tokens
// (67,108,864, capacity/PROTOCOL.md#bounds) allows, whose memory must not
// grow with the prompt.
func BenchmarkMemoryPerStream(b *testing.B) {
	for _, tc := range []struct{ streams, context int }{{10000, 64}, {67108864 / 131072, 131072}} {
		b.Run(fmt.Sprintf("streams=%d/ctx=%d", tc.streams, tc.context), func(b *testing.B) {
			memoryPerStream(b, tc.streams, tc.context)
		})
	}
}

func memoryPerStream(b *testing.B, streams, context int) {
	if _, err := (capacity.Workload{Concurrency: streams}).Resolved(); err != nil {
		b.Skipf("%d streams: %v", streams, err)
	}
	raiseFileLimit()
	base := startServer(b, Schedule{TTFT: 3 * time.Second, Chunks: 4, PromptTokens: context})
	t := capacity.Target{BaseURL: base, Model: "perf", MaxModelLen: 1 << 20}
	w := capacity.Workload{Requests: streams, Concurrency: streams, ContextTokens: context,
		SharedPrefixTokens: capacity.None, MaxTokens: 4, Timeout: time.Minute}
	var growth, inflight int64
	for b.Loop() {
		debug.FreeOSMemory() // what an earlier run left is returned, not counted as idle
		idle := residentKiB(b)
		var atInFlight atomic.Int64
		w.Progress = func(p capacity.Progress) {
			if p.InFlight == streams && atInFlight.Load() == 0 { // every stream is waiting for its first token
				atInFlight.Store(residentKiB(b))
			}
		}
		done := make(chan struct{})
		peak := make(chan int64)
		go func() {
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			var m int64
			for {
				m = max(m, residentKiB(b))
				select {
				case <-done:
					peak <- m
					return
				case <-tick.C:
				}
			}
		}()
		rep, err := capacity.Run(b.Context(), t, w)
		close(done)
		growth = <-peak - idle
		require.NoError(b, err)
		require.Empty(b, rep.Failures)
		require.NotZero(b, atInFlight.Load(), "the streams were never all in flight")
		inflight = atInFlight.Load() - idle
	}
	b.ReportMetric(float64(growth)/float64(streams), "rss-KiB/stream")
	b.ReportMetric(float64(growth)/1024, "rss-MiB")
	b.ReportMetric(float64(inflight)/float64(streams), "inflight-KiB/stream")
}

// residentKiB is the process's resident set size.
func residentKiB(tb testing.TB) int64 {
	data, err := os.ReadFile("/proc/self/statm")
	require.NoError(tb, err)
	var size, resident int64
	_, err = fmt.Sscan(string(data), &size, &resident)
	require.NoError(tb, err)
	return resident * int64(os.Getpagesize()) / 1024
}

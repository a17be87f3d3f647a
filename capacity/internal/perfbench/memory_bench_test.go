//go:build unix

package perfbench

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/artifact"
)

// memoryRunStreams is the most streams one run of BenchmarkMemoryPerStream
// holds: the largest Workload.Requests and Concurrency, so 16,384 streams
// are one run.
const memoryRunStreams = 16384

// memoryTTFT is how long the server of BenchmarkMemoryPerStream waits
// before a stream's first event: longer than the dispatch of 16,384
// requests takes on a loaded machine, so that they are all open at once.
const memoryTTFT = 10 * time.Second

// BenchmarkMemoryPerStream holds many streams open at once (the server
// waits memoryTTFT before the first token) and samples the client process's
// resident memory every 10 ms over the whole run (connection warm-up,
// request bodies, the streams, the report); its four events are 250 ms
// apart. Reported, as medians over the iterations, each a growth over the
// idle process (its freed memory returned first) divided by the streams:
// steady-KiB/stream, sampled when the first stream ends (every stream,
// started together, is then in its last gap: the steady state of that
// many open streams); rss-KiB/stream, the peak over the whole run
// (rss-MiB: in total), which adds the transients of dispatch and of the
// report to the steady state; inflight-KiB/stream, sampled when every
// request has been sent and none has an answer yet; and cpu-us/request, the process's CPU time
// over the run per request (connection, body, the stream's four chunks,
// the report). Beside them, the live memory of the Go runtime at the
// steady moment, after the resident size was sampled: a forced collection
// (runtime.GC, in the run's progress callback: the streams that end
// meanwhile wait for it; it lowers no resident figure already sampled,
// only, perhaps, the peak after it, and its CPU, a few microseconds a
// request, is in cpu-us/request), then runtime/metrics (sampleLive), each over the
// idle process's, per stream: goroutines/stream, stack-KiB/stream (the
// stacks' room), stack-used-KiB/stream (the frames in use, as the
// collection scanned them) and heap-live-KiB/stream (the heap's live
// objects), which the garbage collector's timing does not move as it
// moves the resident size. With -perfbench.profiles=DIR each iteration
// writes a heap and a goroutine profile of that moment into DIR
// (writeProfiles). Two shapes: 16,384 streams of small prompts, one run
// (memoryRunStreams), and 512 streams of 131,072-token
// prompts, the most the protocol's cap on planned prompt tokens
// (67,108,864, capacity/PROTOCOL.md#bounds) allows, whose memory must not
// grow with the prompt.
func BenchmarkMemoryPerStream(b *testing.B) {
	for _, tc := range []struct{ streams, context int }{{16384, 64}, {67108864 / 131072, 131072}} {
		b.Run(fmt.Sprintf("streams=%d/ctx=%d", tc.streams, tc.context), func(b *testing.B) {
			memoryPerStream(b, tc.streams, tc.context)
		})
	}
}

func memoryPerStream(b *testing.B, streams, context int) {
	runs := (streams + memoryRunStreams - 1) / memoryRunStreams
	per := streams / runs
	require.Equal(b, streams, runs*per, "the streams split evenly into runs")
	if _, err := (capacity.Workload{Concurrency: per}).Resolved(); err != nil {
		b.Skipf("%d streams: %v", streams, err)
	}
	raiseFileLimit()
	base := startServer(b, Schedule{TTFT: memoryTTFT, Gap: 250 * time.Millisecond, Chunks: 4, PromptTokens: context})
	t := capacity.Target{BaseURL: base, Model: "perf", MaxModelLen: 1 << 20}
	var growth, inflight, steady, cpu []float64
	var goroutines, stackKiB, stackUsedKiB, heapKiB []float64
	defer startProfiling()()
	for i := 0; b.Loop(); i++ {
		debug.FreeOSMemory() // what an earlier run left is returned, not counted as idle
		idle := residentKiB(b)
		idleLive := sampleLive()
		var live atomic.Pointer[liveMemory] // at the steady moment
		var inFlight atomic.Int64           // of all the runs
		var atInFlight, atFirstEnd atomic.Int64
		var maxSeen atomic.Int64
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
		c0 := cpuTime(b)
		var wg sync.WaitGroup
		var ready sync.WaitGroup // every run in its measured phase
		ready.Add(runs)
		errs := make([]error, runs)
		failures := make([]string, runs)
		for r := range runs {
			w := capacity.Workload{Requests: per, Concurrency: per, ContextTokens: context,
				SharedPrefixTokens: capacity.None, MaxTokens: 4, Timeout: time.Minute,
				Observers: []capacity.Observer{&startTogether{ready: &ready}}}
			var last int64 // this run's in-flight count as last reported
			w.Progress = func(p capacity.Progress) {
				n := inFlight.Add(int64(p.InFlight) - last)
				last = int64(p.InFlight)
				if n > maxSeen.Load() {
					maxSeen.Store(n)
				}
				if n == int64(streams) && atInFlight.Load() == 0 { // every stream is waiting for its first token
					atInFlight.Store(residentKiB(b))
				}
				if p.Succeeded+p.Failed > 0 && atInFlight.Load() != 0 && atFirstEnd.Load() == 0 {
					// The first stream has ended: every stream, started
					// together, is in its last gap.
					atFirstEnd.Store(residentKiB(b))
					l := sampleLive() // after the resident size, which its collection would lower
					live.Store(&l)
					writeProfiles(b, i)
				}
			}
			wg.Go(func() {
				rep, err := capacity.Run(b.Context(), t, w)
				errs[r] = err
				if rep != nil && len(rep.Failures) > 0 {
					f := rep.Failures[0]
					failures[r] = fmt.Sprintf("%d failed requests, the first: %s %s", len(rep.Failures), f.ErrorType, f.ErrorMessage)
				}
			})
		}
		wg.Wait()
		cpu = append(cpu, float64(cpuTime(b)-c0)/float64(streams)/1e3)
		close(done)
		growth = append(growth, float64(<-peak-idle))
		for r := range runs {
			require.NoError(b, errs[r])
			require.Empty(b, failures[r])
		}
		require.NotZero(b, atInFlight.Load(), "the streams were never all in flight (at most %d)", maxSeen.Load())
		inflight = append(inflight, float64(atInFlight.Load()-idle))
		require.NotZero(b, atFirstEnd.Load())
		steady = append(steady, float64(atFirstEnd.Load()-idle))
		g, st, su, h := liveGrowth(*live.Load(), idleLive, streams)
		goroutines, stackKiB, stackUsedKiB, heapKiB = append(goroutines, g), append(stackKiB, st), append(stackUsedKiB, su), append(heapKiB, h)
	}
	b.Logf("load average %s; rss growth per iteration (KiB): %.0f", loadAverage(), growth)
	b.ReportMetric(median(steady)/float64(streams), "steady-KiB/stream")
	b.ReportMetric(median(growth)/float64(streams), "rss-KiB/stream")
	b.ReportMetric(median(growth)/1024, "rss-MiB")
	b.ReportMetric(median(inflight)/float64(streams), "inflight-KiB/stream")
	b.ReportMetric(median(cpu), "cpu-us/request")
	b.ReportMetric(median(goroutines), "goroutines/stream")
	b.ReportMetric(median(stackKiB), "stack-KiB/stream")
	b.ReportMetric(median(stackUsedKiB), "stack-used-KiB/stream")
	b.ReportMetric(median(heapKiB), "heap-live-KiB/stream")
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

// startTogether is a Gate that holds a run's first measured request until
// every run of a group has reached its measured phase (its connections
// warmed), so that the runs' streams are in flight at once.
type startTogether struct {
	ready *sync.WaitGroup
	once  sync.Once
}

// Start implements capacity.Observer.
func (g *startTogether) Start(context.Context, time.Time) func(*artifact.Report) {
	return func(*artifact.Report) {}
}

// Admit implements capacity.Gate.
func (g *startTogether) Admit(int) bool {
	g.once.Do(func() {
		g.ready.Done()
		g.ready.Wait()
	})
	return true
}

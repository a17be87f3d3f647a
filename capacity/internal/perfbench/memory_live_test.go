//go:build unix

package perfbench

import (
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// profileDir, when set, is where BenchmarkMemoryPerStream writes a heap
// profile (profileRate) and a goroutine profile of each
// iteration's steady state, for go tool pprof:
//
//	go test -run '^$' -bench MemoryPerStream/streams=16384 -benchtime 1x \
//		./capacity/internal/perfbench -perfbench.profiles=$(mktemp -d)
var profileDir = flag.String("perfbench.profiles", "", "`directory` for the heap and goroutine profiles of BenchmarkMemoryPerStream's steady state")

// The runtime/metrics of the live memory, sampled in the steady state.
const (
	metricHeapObjects = "/memory/classes/heap/objects:bytes"
	metricStacks      = "/memory/classes/heap/stacks:bytes"
	metricStackScan   = "/gc/scan/stack:bytes"
	metricGoroutines  = "/sched/goroutines:goroutines"
)

// liveMemory is what the Go runtime holds for the process after a forced
// collection: the heap's live objects, the stacks (their allocated room,
// and the part of it the last collection scanned, the frames in use) and
// the goroutines.
type liveMemory struct {
	heap, stacks, stackUsed, goroutines uint64
}

// sampleLive forces a full collection (which returns only when the heap
// is swept, so the heap's object bytes are its live bytes, and which
// shrinks the stacks that use under a quarter of their room) and reads
// the live memory.
func sampleLive() liveMemory {
	runtime.GC()
	s := []metrics.Sample{{Name: metricHeapObjects}, {Name: metricStacks}, {Name: metricStackScan}, {Name: metricGoroutines}}
	metrics.Read(s)
	return liveMemory{heap: s[0].Value.Uint64(), stacks: s[1].Value.Uint64(),
		stackUsed: s[2].Value.Uint64(), goroutines: s[3].Value.Uint64()}
}

// liveGrowth is the steady state's live memory over the idle process's,
// per stream: goroutines, stack-KiB (their room), stack-used-KiB (the
// frames in use) and heap-live-KiB.
func liveGrowth(steady, idle liveMemory, streams int) (goroutines, stackKiB, stackUsedKiB, heapKiB float64) {
	per := func(a, b uint64) float64 { return (float64(a) - float64(b)) / float64(streams) }
	return per(steady.goroutines, idle.goroutines), per(steady.stacks, idle.stacks) / 1024,
		per(steady.stackUsed, idle.stackUsed) / 1024, per(steady.heap, idle.heap) / 1024
}

// profileRate is the heap profile's sampling (runtime.MemProfileRate):
// one allocation per 4 KiB on average, a few of each stream's, where
// sampling every allocation slows the dispatch of 16,384 requests past
// memoryTTFT.
const profileRate = 4096

// startProfiling sets the heap profile's sampling to profileRate when
// profileDir is set, and returns the function that restores the rate.
func startProfiling() func() {
	if *profileDir == "" {
		return func() {}
	}
	rate := runtime.MemProfileRate
	runtime.MemProfileRate = profileRate
	return func() { runtime.MemProfileRate = rate }
}

// writeProfiles writes the heap profile and the goroutine profile (one
// stack per group of goroutines, with their counts) into profileDir when
// it is set, named after the benchmark and the iteration.
func writeProfiles(tb testing.TB, iteration int) {
	if *profileDir == "" {
		return
	}
	for _, p := range []struct {
		name  string
		debug int
	}{{"heap", 0}, {"goroutine", 1}} {
		name := filepath.Join(*profileDir, strings.ReplaceAll(tb.Name(), "/", "_")+"-"+p.name+"-"+itoa(iteration)+".pprof")
		if p.debug > 0 {
			name = name[:len(name)-len(".pprof")] + ".txt"
		}
		f, err := os.Create(name)
		require.NoError(tb, err)
		require.NoError(tb, pprof.Lookup(p.name).WriteTo(f, p.debug))
		require.NoError(tb, f.Close())
		tb.Logf("wrote %s", name)
	}
}

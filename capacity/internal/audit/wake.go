package audit

import (
	"context"
	"runtime/metrics"
	"sort"
	"time"
)

// The wake-up probe (PROTOCOL.md#audit): a goroutine of the audit's own
// sleeps wakePeriod at a time during the measured phase and records how
// late each wake-up ran.
//
// Why a probe beside /sched/latencies: the runtime's histogram counts only
// the time a goroutine spends runnable in a run queue. A goroutine whose
// timer expired, or whose connection became readable, is not runnable
// until a processor runs the scheduler and finds it (timers are run, and
// the network polled, at scheduling points; the system monitor polls the
// network only every 10 ms). When every processor is held by busy
// goroutines, the scheduler runs only when the system monitor preempts
// one, at least 10 ms after it got its processor: every wake-up is that
// late, yet the histogram records almost nothing, because by the time the
// woken goroutine is runnable the processor is free. A stream's reader is
// woken exactly so (network readiness), so its stamps are as late as the
// probe's wake-ups, which include the operating system's delay too.
const (
	// wakePeriod is the probe's sleep: well under the 10 ms after which
	// the runtime preempts a busy goroutine, so that a held processor
	// makes each wake-up at least 10 ms - wakePeriod late; 200 wake-ups a
	// second cost the client a few hundred microseconds of CPU a second.
	wakePeriod = 5 * time.Millisecond
	// wakeLagP50Limit: at or above it half the client's wake-ups ran at
	// least this late. Between what an idle client measures and what a
	// held processor forces: the runtime waits for a timer in epoll_wait,
	// whose timeout is whole milliseconds, so an idle process's timers
	// fire up to 1 ms late (measured here: a median of 0.4 to 1 ms, with
	// the operating system's delay), while a held processor makes the
	// median at least 10 ms - wakePeriod = 5 ms (measured: 17 to 21 ms).
	// The median, not the p99: on a machine shared with other processes
	// the operating system alone puts the p99 at several milliseconds.
	wakeLagP50Limit = 2 * time.Millisecond
	// wakeMinSamples: below it the rule on wakeLagP50Limit does not
	// apply: the median of fewer than 10 wake-ups (a phase under 50 ms)
	// is one or two delays of the operating system, not the client's.
	wakeMinSamples = 10
)

// wakeProbe is the probe's goroutine; stop ends it and returns the lags.
type wakeProbe struct {
	quit chan struct{}
	done chan *metrics.Float64Histogram
}

// startWakeProbe starts the probe; it bins each lag into buckets (the
// runtime's scheduler-latency bounds, so its quantiles read like theirs).
// It ends at stop or when ctx ends.
func startWakeProbe(ctx context.Context, buckets []float64) *wakeProbe {
	p := &wakeProbe{quit: make(chan struct{}), done: make(chan *metrics.Float64Histogram, 1)}
	h := &metrics.Float64Histogram{Buckets: buckets, Counts: make([]uint64, max(len(buckets)-1, 0))}
	go func() {
		defer func() { p.done <- h }()
		if len(h.Counts) == 0 {
			return
		}
		t := time.NewTimer(wakePeriod)
		defer t.Stop()
		due := time.Now().Add(wakePeriod)
		for {
			select {
			case <-p.quit:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			h.Counts[bucketOf(buckets, time.Since(due).Seconds())]++
			due = time.Now().Add(wakePeriod)
			t.Reset(wakePeriod)
		}
	}()
	return p
}

// stop ends the probe and returns its histogram of lags.
func (p *wakeProbe) stop() *metrics.Float64Histogram {
	close(p.quit)
	return <-p.done
}

// bucketOf is the index of the bucket of buckets holding v (clamped to
// the first and last).
func bucketOf(buckets []float64, v float64) int {
	i := sort.SearchFloat64s(buckets, v) // the first bound >= v
	if i < len(buckets) && buckets[i] == v {
		i++ // a bucket includes its lower bound
	}
	return min(max(i-1, 0), len(buckets)-2)
}

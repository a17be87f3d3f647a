package audit

import (
	"context"
	"runtime/metrics"
	"sort"
	"time"
)

// The wake-up probe (PROTOCOL.md#audit): a goroutine of the audit's own
// sleeps wakePeriod at a time during the measured phase and records how
// late each wake-up ran and how much of that lag the client's own work
// accounts for (its held lag).
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
//
// Why the held lag: a wake-up is late either because the client's own
// goroutines held every processor (the client distorted itself) or
// because the operating system ran the process late (other processes on
// the machine). In the first case the process burned CPU while the
// wake-up waited; in the second it did not, and its wake-ups onto a
// server's answer tend to run on the processor that server just freed.
// The held lag of a wake-up is its lag, at most the CPU time the process
// used since the previous wake-up: intermittent stalls of the client (its
// processors taken 15 ms of every 50 ms) make it milliseconds at the p90
// (measured: 4.8 to 9.0 ms), while a quiet client on a loaded machine,
// whose wake-ups ran late by up to 25 ms at the p90, holds nothing
// (measured: 0.34 to 0.58 ms).
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
	// heldLagP90Limit: at or above it a tenth of the client's wake-ups
	// waited at least this long for its own work: twice an idle
	// process's timer slack (the 1 ms of epoll_wait's timeout), which
	// held lag at most reaches when the client is busy and on time.
	heldLagP90Limit = 2 * time.Millisecond
)

// wakeProbe is the probe's goroutine; stop ends it and returns the lags.
type wakeProbe struct {
	quit chan struct{}
	done chan wakeLags
}

// wakeLags are the probe's histograms: each wake-up's lag, and its held
// lag (nil where the process's CPU time is unknown).
type wakeLags struct {
	lag, held *metrics.Float64Histogram
}

// startWakeProbe starts the probe; it bins each lag into buckets (the
// runtime's scheduler-latency bounds, so its quantiles read like theirs).
// It ends at stop or when ctx ends.
func startWakeProbe(ctx context.Context, buckets []float64) *wakeProbe {
	p := &wakeProbe{quit: make(chan struct{}), done: make(chan wakeLags, 1)}
	hist := func() *metrics.Float64Histogram {
		return &metrics.Float64Histogram{Buckets: buckets, Counts: make([]uint64, max(len(buckets)-1, 0))}
	}
	lags := wakeLags{lag: hist(), held: hist()}
	go func() {
		defer func() { p.done <- lags }()
		if len(lags.lag.Counts) == 0 {
			return
		}
		t := time.NewTimer(wakePeriod)
		defer t.Stop()
		cpu, cpuOK := processCPU()
		if !cpuOK {
			lags.held = nil
		}
		due := time.Now().Add(wakePeriod)
		for {
			select {
			case <-p.quit:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			lag := time.Since(due)
			lags.lag.Counts[bucketOf(buckets, lag.Seconds())]++
			if now, ok := processCPU(); ok && lags.held != nil {
				lags.held.Counts[bucketOf(buckets, min(lag, now-cpu).Seconds())]++
				cpu = now
			}
			due = time.Now().Add(wakePeriod)
			t.Reset(wakePeriod)
		}
	}()
	return p
}

// stop ends the probe and returns its histograms.
func (p *wakeProbe) stop() wakeLags {
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

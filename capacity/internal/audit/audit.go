package audit

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"runtime/metrics"
	"slices"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/stats"
)

// The runtime/metrics histograms read.
const (
	// schedLatencies is the time goroutines spent runnable before running.
	schedLatencies = "/sched/latencies:seconds"
	// gcPauses is the stop-the-world pauses of the GC (the same as
	// /sched/pauses/total/gc:seconds).
	gcPauses = "/gc/pauses:seconds"
)

// poolWaitFloor is the shortest time obtaining a connection that counts
// as a wait for the pool (taking an idle connection costs microseconds).
const poolWaitFloor = 100 * time.Microsecond

// Inputs are what the engine measured of itself, passed to Stop.
type Inputs struct {
	// SendLags are, for an open loop, how late each measured request was
	// issued after it was due, for the requests that were not waiting for
	// the in-flight cap (their lag is the server's backlog, not the
	// client's); nil for a closed loop.
	SendLags []time.Duration
	// ConnWaits are, per measured request, the time from asking the
	// transport for a connection to getting one (httptrace GetConn to
	// GotConn) when the request did not dial one itself.
	ConnWaits []time.Duration
	// Resolution is the run's own timings, which the rule weighs the
	// client's distortions against.
	Resolution Resolution
}

// Resolution is the run's own timing scale (PROTOCOL.md#audit): the
// smallest timings the run reports that a distortion of the client could
// corrupt. A zero field is unknown (no successful request, no gap): the
// rules weighed against it keep their absolute limits alone.
type Resolution struct {
	// Gap is the smaller of the run's inter-chunk gap p50
	// (anvil_go.chunk_timing.itl_ms.p50) and TPOT p50: what a pause of
	// every stream (the scheduler's latency, a GC pause) stretches.
	Gap time.Duration
	// GapOf names Gap in a reason: "inter-chunk gap" or "TPOT".
	GapOf string
	// TTFT is the run's TTFT p50: what a request's wait before it leaves
	// (for a pooled connection, the open loop's send lag) adds to.
	TTFT time.Duration
}

// Recorder holds the readings taken when the measured phase started and
// runs the wake-up probe (wake.go) until the phase ends.
type Recorder struct {
	at    time.Time
	cpu   time.Duration
	cpuOK bool
	hist  []metrics.Sample
	probe *wakeProbe
	end   *reading // the readings at the phase's end, once Finish took them
}

// reading is what Finish reads at the end of the phase.
type reading struct {
	wall  time.Duration
	cpu   time.Duration
	cpuOK bool
	hist  []metrics.Sample
	wake  wakeLags
}

// Start reads the runtime's histograms and the process's CPU time at the
// start of the measured phase and starts the wake-up probe, which runs
// until Finish (or Stop), or until ctx ends.
func Start(ctx context.Context) *Recorder {
	r := &Recorder{hist: readHistograms()}
	var buckets []float64
	if r.hist[0].Value.Kind() == metrics.KindFloat64Histogram {
		buckets = r.hist[0].Value.Float64Histogram().Buckets
	}
	r.probe = startWakeProbe(ctx, buckets)
	r.cpu, r.cpuOK = processCPU()
	r.at = time.Now()
	return r
}

func readHistograms() []metrics.Sample {
	s := []metrics.Sample{{Name: schedLatencies}, {Name: gcPauses}}
	metrics.Read(s)
	return s
}

// Finish takes the readings at the end of the measured phase and stops
// the probe, so that what the run does afterwards (assembling its report)
// is not audited; later calls do nothing.
func (r *Recorder) Finish() {
	if r.end != nil {
		return
	}
	e := &reading{wall: time.Since(r.at)}
	e.cpu, e.cpuOK = processCPU()
	e.hist = readHistograms()
	e.wake = r.probe.stop()
	r.end = e
}

// Stop takes the readings at the end of the phase (unless Finish took
// them) and returns the audit of the phase, judged.
func (r *Recorder) Stop(in Inputs) *artifact.Audit {
	r.Finish()
	e := r.end
	a := &artifact.Audit{GOMAXPROCS: runtime.GOMAXPROCS(0), Reasons: []string{}}

	if d, ok := increase(r.hist[0], e.hist[0]); ok {
		a.SchedSamples = int(total(d))
		a.SchedLatencyP99MS, a.SchedLatencyMaxMS = quantileMS(d, 0.99), quantileMS(d, 1)
	}
	if w := e.wake.lag; w != nil && len(w.Counts) > 0 {
		a.WakeSamples = int(total(w))
		a.WakeLagP50MS, a.WakeLagP99MS, a.WakeLagMaxMS = quantileMS(w, 0.5), quantileMS(w, 0.99), quantileMS(w, 1)
	}
	if h := e.wake.held; h != nil && len(h.Counts) > 0 {
		a.HeldWakeLagP90MS, a.HeldWakeLagMaxMS = quantileMS(h, 0.9), quantileMS(h, 1)
	}
	if d, ok := increase(r.hist[1], e.hist[1]); ok {
		a.GCPauses = int(total(d))
		a.GCPauseMaxMS = quantileMS(d, 1)
		a.GCPauseTotalMS = sumMS(d)
	}
	if r.cpuOK && e.cpuOK && e.wall > 0 {
		a.CPUShare = new(float64(e.cpu-r.cpu) / (float64(e.wall) * float64(a.GOMAXPROCS)))
	}
	if len(in.SendLags) > 0 {
		ms := sortedMS(in.SendLags)
		a.SendLagP99MS, a.SendLagMaxMS = new(stats.Percentile(ms, 99)), new(ms[len(ms)-1])
	}
	for _, w := range in.ConnWaits {
		if w >= poolWaitFloor {
			a.PoolWaits++
			ms := float64(w) / float64(time.Millisecond)
			if a.PoolWaitMaxMS == nil || ms > *a.PoolWaitMaxMS {
				a.PoolWaitMaxMS = new(ms)
			}
		}
	}
	Judge(a, in.Resolution)
	return a
}

// sortedMS returns ds in milliseconds, ascending.
func sortedMS(ds []time.Duration) []float64 {
	ms := make([]float64, len(ds))
	for i, d := range ds {
		ms[i] = float64(d) / float64(time.Millisecond)
	}
	slices.Sort(ms)
	return ms
}

// increase returns the histogram end - start (the same buckets: the
// runtime's are fixed for a process).
func increase(start, end metrics.Sample) (*metrics.Float64Histogram, bool) {
	if start.Value.Kind() != metrics.KindFloat64Histogram || end.Value.Kind() != metrics.KindFloat64Histogram {
		return nil, false // not in this Go version
	}
	s, e := start.Value.Float64Histogram(), end.Value.Float64Histogram()
	if len(s.Counts) != len(e.Counts) {
		return nil, false
	}
	d := &metrics.Float64Histogram{Buckets: e.Buckets, Counts: make([]uint64, len(e.Counts))}
	for i := range e.Counts {
		d.Counts[i] = e.Counts[i] - s.Counts[i]
	}
	return d, true
}

func total(h *metrics.Float64Histogram) uint64 {
	var n uint64
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// bound is bucket i's upper bound, or its lower one when that is +Inf.
func bound(h *metrics.Float64Histogram, i int) float64 {
	if hi := h.Buckets[i+1]; !math.IsInf(hi, 1) {
		return hi
	}
	return h.Buckets[i]
}

// quantileMS is the nearest-rank q-quantile of h as its bucket's upper
// bound, in ms (q = 1: the highest non-empty bucket); nil when h is empty.
func quantileMS(h *metrics.Float64Histogram, q float64) *float64 {
	n := total(h)
	if n == 0 {
		return nil
	}
	rank := uint64(math.Ceil(q * float64(n)))
	var cum uint64
	for i, c := range h.Counts {
		cum += c
		if cum >= max(rank, 1) {
			return new(bound(h, i) * 1000)
		}
	}
	return new(bound(h, len(h.Counts)-1) * 1000)
}

// sumMS is the sum of h's observations taken at their buckets' upper
// bounds (so at most that), in ms; nil when h is empty.
func sumMS(h *metrics.Float64Histogram) *float64 {
	if total(h) == 0 {
		return nil
	}
	s := 0.0
	for i, c := range h.Counts {
		if c > 0 {
			s += float64(c) * bound(h, i)
		}
	}
	return new(s * 1000)
}

// The rule's limits (PROTOCOL.md#audit). Each limit in time is a floor:
// a rule fires at max(floor, relativeShare x the run's timing it
// distorts), the floor alone when that timing is unknown.
const (
	// relativeShare: a distortion under a tenth of the smallest timing it
	// can corrupt moves that timing by less than 10 %, which does not
	// change what the run says; at or above it, it does.
	relativeShare = 0.1
	// gcPauseLimit: a stop-the-world pause at least this long froze every
	// stream's clock at once.
	gcPauseLimit = 10 * time.Millisecond
	// cpuShareLimit: at or above it the client was CPU-bound.
	cpuShareLimit = 0.9
	// sendLagP99Limit: the open loop issued requests this late (p99) while
	// free to send: the schedule it claims is not the one it kept.
	sendLagP99Limit = time.Millisecond
	// poolWaitLimit: a request waited this long for a pooled connection:
	// its time includes the client's queue.
	poolWaitLimit = time.Millisecond
)

// Judge sets a's verdict and reasons by the rule, weighing the
// distortions against the run's own timings r: one reason per limit
// reached, in this order; ok when none is. Gap and TTFT are r's.
//
// The scheduler's latency (a.SchedLatencyP99MS) is recorded, never
// judged: the time a goroutine waits in a run queue includes the time
// the operating system left the process's thread off the processor, so
// its p99 reached 1.31 and 2.62 ms in quiet runs whose client added 0.5
// ms to its TTFTs at the p90, while what it sees of the client's own
// stalls the held wake-up lag sees without the machine's load.
//
//   - wake-up lag p50 >= max(wakeLagP50Limit, relativeShare x Gap), over
//     wakeMinSamples wake-ups at least (wake.go); the reason says so when
//     the held lag p90 is under heldLagP90Limit: the machine, not the
//     client's own work, delayed it;
//   - held wake-up lag p90 >= max(heldLagP90Limit, relativeShare x Gap),
//     over wakeMinSamples wake-ups at least (wake.go): intermittent
//     stalls, which leave the median alone;
//   - a GC pause >= max(gcPauseLimit, relativeShare x Gap);
//   - CPU share >= cpuShareLimit;
//   - send lag p99 >= max(sendLagP99Limit, relativeShare x TTFT);
//   - a pool wait >= max(poolWaitLimit, relativeShare x TTFT).
//
// Measurements that are nil (not measured) fire nothing. A reason
// weighed against a known timing names it and the distortion's share.
func Judge(a *artifact.Audit, r Resolution) {
	gap := weigh{r.Gap, r.GapOf}
	ttft := weigh{r.TTFT, "TTFT"}
	a.Reasons = []string{}
	if v := a.WakeLagP50MS; v != nil && gap.reached(*v, wakeLagP50Limit) && a.WakeSamples >= wakeMinSamples {
		reason := fmt.Sprintf("scheduler latency: the client's wake-ups ran %.3g ms late at the median (p99 %.3g ms): timings below ~%.2g ms resolution are not trustworthy", *v, deref(a.WakeLagP99MS), *v) + gap.share(*v)
		if h := a.HeldWakeLagP90MS; h != nil && ms(heldLagP90Limit) > *h {
			reason += fmt.Sprintf("; %s %.3g ms at the p90: %s", heldOnly, *h, machineLoad)
		}
		a.Reasons = append(a.Reasons, reason)
	}
	if v := a.HeldWakeLagP90MS; v != nil && gap.reached(*v, heldLagP90Limit) && a.WakeSamples >= wakeMinSamples {
		worst := max(deref(a.HeldWakeLagMaxMS), *v)
		a.Reasons = append(a.Reasons, fmt.Sprintf("intermittent stalls: the client's own work held its processors while its wake-ups were due, one in ten by %.3g ms or more, up to %.3g ms: timings are uncertain by up to ~%.2g ms", *v, worst, worst)+gap.share(*v))
	}
	if v := a.GCPauseMaxMS; v != nil && gap.reached(*v, gcPauseLimit) {
		a.Reasons = append(a.Reasons, fmt.Sprintf("a GC pause of up to %.3g ms stopped every stream's clock at once", *v)+gap.share(*v))
	}
	if v := a.CPUShare; v != nil && *v >= cpuShareLimit {
		a.Reasons = append(a.Reasons, fmt.Sprintf("the client used %.0f%% of GOMAXPROCS=%d: it was CPU-bound and its stamps wait for a processor", *v*100, a.GOMAXPROCS))
	}
	if v := a.SendLagP99MS; v != nil && ttft.reached(*v, sendLagP99Limit) {
		a.Reasons = append(a.Reasons, fmt.Sprintf("open-loop send lag p99 %.3g ms: requests left later than scheduled while the in-flight cap allowed them", *v)+ttft.share(*v))
	}
	if v := a.PoolWaitMaxMS; v != nil && ttft.reached(*v, poolWaitLimit) {
		a.Reasons = append(a.Reasons, fmt.Sprintf("%d requests waited for a pooled connection, up to %.3g ms: their timings include the client's own queue", a.PoolWaits, *v)+ttft.share(*v))
	}
	a.SetVerdict()
}

// heldOnly and machineLoad end the wake-up median's reason when the
// client's own work accounts for little of the lag (its held lag under
// heldLagP90Limit at the p90): the operating system ran the client late,
// for other processes on the machine, which the timings suffer all the
// same.
const (
	heldOnly    = "the client's own work held them up by only"
	machineLoad = "other processes on the machine delayed it"
)

// weigh is a timing of the run a distortion is weighed against; of is
// its name in a reason. ref 0 is unknown.
type weigh struct {
	ref time.Duration
	of  string
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// reached says whether a distortion of v ms reaches max(floor,
// relativeShare x w.ref).
func (w weigh) reached(v float64, floor time.Duration) bool {
	return v >= max(ms(floor), relativeShare*ms(w.ref))
}

// share is the reason's suffix naming the distortion's share of w.ref,
// "" when w.ref is unknown.
func (w weigh) share(v float64) string {
	if w.ref <= 0 {
		return ""
	}
	return fmt.Sprintf(" (%.0f%% of the run's %s p50 of %.4g ms)", 100*v/ms(w.ref), w.of, ms(w.ref))
}

// deref is *v, or 0 for nil.
func deref(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}

package steady

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/anvilbench/anvil/stats"
)

// The loads a window is tested at, the values of anvil_go.steady.load.
const (
	// InFlight is a closed loop: every request due as soon as a slot is
	// free, the window at its concurrency.
	InFlight = "in_flight"
	// Rate is a schedule of due times (an open loop, a trace replay): the
	// window sends at the rate the schedule offers.
	Rate = "rate"
	// None is a load with no target (sessions whose users think between
	// turns): the window is tested for trends alone.
	None = "none"
)

// The constants of the test (the package documentation states it whole).
const (
	// baseBinMS is the bin width of a long enough phase: 1 s.
	baseBinMS = 1000.0
	// phaseBins is the number of bins a phase shorter than 20 s is cut
	// into.
	phaseBins = 20
	// completionsPerBin is the fewest completions a bin holds on average.
	completionsPerBin = 4
	// maxBins bounds the bins of a phase (and the Mann-Kendall test's
	// cost, quadratic in them).
	maxBins = 1000
	// minBins is the fewest consecutive bins at load the test needs.
	minBins = 10
	// minWindowBins is the fewest bins the window keeps once MSER cut its
	// transients.
	minWindowBins = 5
	// minTrendValues is the fewest values a series needs in the window to
	// be tested for a trend.
	minTrendValues = 5
	// loadShare is the share of its target a closed loop's in-flight count
	// must reach in a bin at load.
	loadShare = 0.9
	// rateTolerance is how far, relatively, a "rate" window's achieved
	// rate may be from its offered one.
	rateTolerance = 0.1
)

// Request is what the test reads of one sent measured request: offsets
// on the phase's clock, in ms.
type Request struct {
	// At is the bin the request counts in for its TTFT: when it was sent,
	// or for a Rate load when it was due.
	At float64
	// Sent and End are when it was sent and ended (the phase's end when it
	// never did).
	Sent, End float64
	// OK says it succeeded; TTFT is then its TTFT in ms (for a Rate load
	// from its due time, queue included), NaN for an answer that
	// generates no token (an embeddings answer): the trend is then on
	// completions alone.
	OK   bool
	TTFT float64
}

// Input is a run as the test reads it.
type Input struct {
	PhaseMS     float64 // the measured phase's duration, wall_clock_ms
	Load        string  // InFlight, Rate or None
	Concurrency int     // the closed loop's target of requests in flight
	// Requests are the sent measured requests, in any order.
	Requests []Request
	// Due are the due offsets of every measured request that has one
	// (sent or not), for a Rate load.
	Due []float64
}

// Window is the outcome of the test: anvil_go.steady without its
// metrics (capacity/PROTOCOL.md#steady has every key).
type Window struct {
	Found  bool
	Reason string // why there is none; "" when Found
	BinMS  float64
	Bins   int
	// Target and Achieved are the load's target (nil for None) and the
	// window's load; StartMS and EndMS the window tested; CompletionsZ
	// and TTFTZ the trend statistics. Each is nil when not reached.
	Target, Achieved    *float64
	StartMS, EndMS      *float64
	CompletionsZ, TTFTZ *float64
}

// Find runs the test on in (the package documentation states it whole).
func Find(in Input) Window {
	st := Window{}
	succeeded := 0
	for _, q := range in.Requests {
		if q.OK {
			succeeded++
		}
	}
	if succeeded == 0 {
		return refuse(st, "no measured request succeeded")
	}
	phase := in.PhaseMS
	bin := max(min(baseBinMS, phase/phaseBins), completionsPerBin*phase/float64(succeeded), phase/maxBins)
	n := int(math.Floor(phase/bin + 1e-9))
	st.BinMS, st.Bins = bin, n
	if n < minBins {
		return refuse(st, fmt.Sprintf("too short: the phase holds %d bins of %s ms (%d completions each on average at least), the test needs %d",
			n, short(bin), completionsPerBin, minBins))
	}
	s := seriesOf(in.Requests, bin, n)
	gate, target, why := loadGate(in, s, bin)
	g0, g1 := longestRun(gate)
	if g1-g0 < minBins {
		return refuse(st, fmt.Sprintf("%s in at most %d consecutive bins of %s ms, the test needs %d", why, g1-g0, short(bin), minBins))
	}
	a := g0 + cut(s.completions[g0:g1], s.ttft[g0:g1])
	b := g1 - cut(reversed(s.completions[a:g1]), reversed(s.ttft[a:g1]))
	start, end := float64(a)*bin, float64(b)*bin
	st.StartMS, st.EndMS = &start, &end
	if b-a < minWindowBins {
		return refuse(st, fmt.Sprintf("never settled: the start and end transients (MSER) leave %d of the %d bins at load, the window needs %d", b-a, g1-g0, minWindowBins))
	}
	zc := mannKendall(s.completions[a:b])
	st.CompletionsZ = &zc
	if ttft := present(s.ttft[a:b]); len(ttft) >= minTrendValues {
		zt := mannKendall(ttft)
		st.TTFTZ = &zt
	}
	achieved, offered := windowLoad(in, s, a, b, start, end)
	st.Achieved = &achieved
	switch in.Load {
	case InFlight:
		st.Target = &target
	case Rate:
		st.Target = &offered
	}
	var fails []string
	if math.Abs(zc) >= stats.Z95 {
		fails = append(fails, fmt.Sprintf("completions per bin trend (Mann-Kendall z = %.2f)", zc))
	}
	if st.TTFTZ != nil && math.Abs(*st.TTFTZ) >= stats.Z95 {
		fails = append(fails, fmt.Sprintf("the median TTFT per bin trends (Mann-Kendall z = %.2f)", *st.TTFTZ))
	}
	if len(fails) > 0 {
		return refuse(st, fmt.Sprintf("not steady over the window: %s; |z| >= %g is a trend at the 5%% level", strings.Join(fails, ", "), stats.Z95))
	}
	if in.Load == Rate && !(math.Abs(achieved-offered) <= rateTolerance*offered) {
		return refuse(st, fmt.Sprintf("the window sent %s requests/s of the %s offered (more than %g%% off)", short(achieved), short(offered), rateTolerance*100))
	}
	st.Found = true
	return st
}

// refuse records why st has no steady window.
func refuse(st Window, reason string) Window {
	st.Reason = reason
	return st
}

// series are the per-bin series of the test; ttft is NaN in a bin with
// no value.
type series struct {
	completions, ttft, inFlight []float64
}

// seriesOf counts the series of reqs in n bins of width bin.
func seriesOf(reqs []Request, bin float64, n int) series {
	s := series{completions: make([]float64, n), ttft: make([]float64, n), inFlight: make([]float64, n)}
	ttfts := make([][]float64, n)
	busy := newSpread(n, bin)
	for _, q := range reqs {
		busy.add(q.Sent, q.End, 1)
		if !q.OK {
			continue
		}
		if k := binOf(q.End, bin); k < n {
			s.completions[k]++
		}
		if k := binOf(q.At, bin); k < n && !math.IsNaN(q.TTFT) {
			ttfts[k] = append(ttfts[k], q.TTFT)
		}
	}
	for k, v := range busy.total() {
		s.inFlight[k] = v / bin
	}
	for k, v := range ttfts {
		s.ttft[k] = math.NaN()
		if len(v) > 0 {
			slices.Sort(v)
			s.ttft[k] = stats.Percentile(v, 50)
		}
	}
	return s
}

// binOf is the bin an offset falls in; a negative offset is bin 0.
func binOf(ms, bin float64) int {
	if !(ms > 0) {
		return 0
	}
	return int(ms / bin)
}

// loadGate says which bins are at load, the closed loop's target, and how
// to name a load that was never at target long enough.
func loadGate(in Input, s series, bin float64) ([]bool, float64, string) {
	gate := make([]bool, len(s.completions))
	switch in.Load {
	case InFlight:
		target := float64(min(in.Concurrency, len(in.Requests)))
		for k, v := range s.inFlight {
			gate[k] = v >= loadShare*target
		}
		return gate, target, fmt.Sprintf("the requests in flight were at least %g%% of %g", loadShare*100, target)
	case Rate:
		first, last := math.Inf(1), math.Inf(-1)
		for _, d := range in.Due {
			first, last = min(first, d), max(last, d)
		}
		for k := range gate {
			gate[k] = float64(k)*bin >= first && float64(k+1)*bin <= last
		}
		return gate, 0, "the schedule had requests due"
	}
	for k := range gate {
		gate[k] = true
	}
	return gate, 0, "the phase ran"
}

// longestRun returns the first longest run [a, b) of true in gate.
func longestRun(gate []bool) (a, b int) {
	for i := 0; i < len(gate); {
		if !gate[i] {
			i++
			continue
		}
		j := i
		for j < len(gate) && gate[j] {
			j++
		}
		if j-i > b-a {
			a, b = i, j
		}
		i = j
	}
	return a, b
}

// windowLoad is the window's achieved load and, for a "rate" load, its
// offered rate: the mean in flight over bins [a, b), or the requests sent
// and due within [start, end) per second.
func windowLoad(in Input, s series, a, b int, start, end float64) (achieved, offered float64) {
	if in.Load != Rate {
		for _, v := range s.inFlight[a:b] {
			achieved += v
		}
		return achieved / float64(b-a), 0
	}
	sent, due := 0, 0
	for _, q := range in.Requests {
		if q.Sent >= start && q.Sent < end {
			sent++
		}
	}
	for _, d := range in.Due {
		if d >= start && d < end {
			due++
		}
	}
	secs := (end - start) / 1000
	return float64(sent) / secs, float64(due) / secs
}

// short formats v with at most 4 significant digits.
func short(v float64) string { return fmt.Sprintf("%.4g", v) }

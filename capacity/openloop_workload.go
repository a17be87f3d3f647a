package capacity

import (
	"math"
	"slices"
	"time"

	"github.com/anvilbench/anvil/capacity/internal/arrival"
)

// Bounds of the open-loop fields of a Workload (capacity/PROTOCOL.md#bounds).
// They are those of package internal/arrival, which computes the schedule.
const (
	// minRate is the lowest Workload.Rate of an open loop, in requests per second.
	minRate = arrival.MinRate
	// maxRate is the highest Workload.Rate, in requests per second.
	maxRate = arrival.MaxRate
	// minBurstiness is the smallest Workload.Burstiness of arrivalGamma.
	minBurstiness = arrival.MinBurstiness
	// maxBurstiness is the largest Workload.Burstiness of arrivalGamma.
	maxBurstiness = arrival.MaxBurstiness
	// defaultBurstiness is the gamma shape when Workload.Burstiness is 0:
	// 1, the shape of the Poisson process (vLLM's default).
	defaultBurstiness = 1.0
)

// ArrivalProcess names the distribution of the intervals between the due
// times of an open loop's requests (capacity/PROTOCOL.md#overview):
// "constant" spaces requests exactly 1/Rate apart; "poisson" draws
// exponential intervals of mean 1/Rate, the arrivals of many independent
// users (coefficient of variation 1); "gamma" draws gamma intervals of
// mean 1/Rate and shape Workload.Burstiness (coefficient of variation
// 1/sqrt(Burstiness)), as vLLM's bench serve --burstiness defines them.
type ArrivalProcess string

// The arrival processes of an open loop; their values are the names of
// package internal/arrival and the anvil_go.arrival.process of the artifact.
const (
	// arrivalConstant spaces requests exactly 1/Rate apart.
	arrivalConstant ArrivalProcess = ArrivalProcess(arrival.Constant)
	// arrivalPoisson draws exponential intervals of mean 1/Rate: the
	// arrivals of many independent users (coefficient of variation 1).
	arrivalPoisson ArrivalProcess = ArrivalProcess(arrival.Poisson)
	// arrivalGamma draws gamma intervals of mean 1/Rate and shape
	// Burstiness (coefficient of variation 1/sqrt(Burstiness)), as vLLM's
	// bench serve --burstiness defines them.
	arrivalGamma ArrivalProcess = ArrivalProcess(arrival.Gamma)
)

// arrivalProcesses lists the processes in the order errors name them.
var arrivalProcesses = [...]ArrivalProcess{arrivalConstant, arrivalPoisson, arrivalGamma}

// OpenLoop reports whether w is an open loop (Rate > 0).
func (w Workload) OpenLoop() bool { return w.Rate > 0 }

// withArrivalDefaults fills the open-loop defaults: the process is
// arrivalPoisson, or arrivalGamma when a burstiness is given (a burstiness
// means a gamma shape, as in vLLM); a gamma process without a burstiness
// has defaultBurstiness. A closed loop keeps its zero values, so that
// setting an open-loop field without a Rate is reported.
func (w Workload) withArrivalDefaults() Workload {
	if !w.OpenLoop() {
		return w
	}
	if w.Arrival == "" {
		w.Arrival = arrivalPoisson
		if w.Burstiness != 0 {
			w.Arrival = arrivalGamma
		}
	}
	if w.Arrival == arrivalGamma && w.Burstiness == 0 {
		w.Burstiness = defaultBurstiness
	}
	return w
}

// validateArrival checks the open-loop fields of a Workload whose defaults
// are filled in.
func (w Workload) validateArrival(v *validator) {
	if r := w.Rate; math.IsNaN(r) || r < 0 || r > 0 && (r < minRate || r > maxRate) || math.IsInf(r, 0) {
		v.add("Workload.Rate", r, "must be 0 (closed loop) or in [%g, %g] requests per second", float64(minRate), float64(maxRate))
		return
	}
	if !w.OpenLoop() {
		if w.Arrival != "" {
			v.add("Workload.Arrival", w.Arrival, "needs Rate > 0 (an open loop)")
		}
		if w.Burstiness != 0 {
			v.add("Workload.Burstiness", w.Burstiness, "needs Rate > 0 (an open loop)")
		}
		return
	}
	if w.Burst > 0 {
		v.add("Workload.Burst", w.Burst, "must be 0 with Rate > 0 (a burst sends every request at once, an open loop at its schedule)")
	}
	switch {
	case !slices.Contains(arrivalProcesses[:], w.Arrival):
		v.add("Workload.Arrival", w.Arrival, "must be one of %s", joinValues(arrivalProcesses[:]))
	case w.Arrival == arrivalGamma:
		if b := w.Burstiness; !(b >= minBurstiness && b <= maxBurstiness) { // NaN fails both
			v.add("Workload.Burstiness", b, "must be in [%g, %g] (0: %g)", float64(minBurstiness), float64(maxBurstiness), defaultBurstiness)
		}
	case w.Burstiness != 0:
		v.add("Workload.Burstiness", w.Burstiness, "needs Arrival %q (it is the gamma shape), not %q", arrivalGamma, w.Arrival)
	}
}

// arrivalSpec is the arrival.Spec of an open-loop Workload.
func (w Workload) arrivalSpec() arrival.Spec {
	s := arrival.Spec{Process: arrival.Name(w.Arrival), Rate: w.Rate, Seed: w.Seed}
	if w.Arrival == arrivalGamma {
		s.Burstiness = w.Burstiness
	}
	return s
}

// openLoopSchedule returns the due offsets of an open loop's measured
// requests, computed before the run from (process, rate, burstiness, seed),
// or nil for a closed loop. With Duration the schedule keeps the requests
// due before Duration, and the plan is cut to them: the open loop's
// campaign length fixes its request count before anything is sent.
func openLoopSchedule(w Workload, p *plan) ([]time.Duration, error) {
	if !w.OpenLoop() {
		return nil, nil
	}
	offsets, err := arrival.Schedule(w.arrivalSpec(), p.Len())
	if err != nil {
		return nil, badField("Workload.Rate", w.Rate, "gives no arrival schedule: "+err.Error())
	}
	if w.Duration > 0 {
		n, _ := slices.BinarySearch(offsets, w.Duration) // offsets are non-decreasing; the first is 0
		offsets = offsets[:n:n]
		p.Contexts = p.Contexts[:n:n]
	}
	return offsets, nil
}

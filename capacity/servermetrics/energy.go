package servermetrics

import (
	"cmp"
	"maps"
	"slices"
	"strconv"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// The DCGM exporter's families energy is computed from, in its units.
const (
	// dcgmEnergy is the GPU's energy counter since boot, in mJ.
	dcgmEnergy = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"
	// dcgmPower is the GPU's power draw, in W.
	dcgmPower = "DCGM_FI_DEV_POWER_USAGE"
	// dcgmInstance labels a MIG instance's series, which have no energy
	// of their own (the whole GPU's counts it).
	dcgmInstance = "GPU_I_ID"
)

// The methods of anvil_go.energy.method and idle_method.
const (
	energyCounter = "counter"
	energyPower   = "power"
	energyMixed   = "mixed"
)

// Unit conversions of the energy rule.
const (
	joulesPerKWh     = 3.6e6
	secondsPerHour   = 3600.0
	tokensPerMillion = 1e6
	millijoulesPerJ  = 1e3
	millisecondsPerS = 1e3
	wattMSPerJoule   = 1e3 // the power integral is in W x ms
)

// gpuEnergy is what one GPU's series say of the phase and the idle
// window before it.
type gpuEnergy struct {
	counterJ, powerJ      float64
	counterMoved, hasPow  bool
	idleCounterW, idlePow *float64
	seconds               float64
}

// joules is the GPU's energy over the phase by the rule, and its method;
// ok is false without a moving counter or a power series.
func (e *gpuEnergy) joules() (float64, string, bool) {
	switch {
	case e.counterMoved:
		return e.counterJ, energyCounter, true
	case e.hasPow:
		return e.powerJ, energyPower, true
	}
	return 0, "", false
}

// idle is the GPU's idle power and its method; ok is false without one.
func (e *gpuEnergy) idle() (float64, string, bool) {
	switch {
	case e.idleCounterW != nil:
		return *e.idleCounterW, energyCounter, true
	case e.idlePow != nil:
		return *e.idlePow, energyPower, true
	}
	return 0, "", false
}

// energy computes anvil_go.energy from the endpoints' series and the
// report, by the rule of capacity/PROTOCOL.md#energy: each GPU's energy
// counter's rise over the phase (first sample to last, every sample
// counted, a reset from zero), or, for a GPU whose counter is absent or
// did not move, its power integrated over the samples by the trapezoid
// rule; summed over the GPUs, and divided by the run's output tokens and
// total tokens. Nil when no GPU had either series.
func (g *gpuSet) energy(rep *artifact.Report) *artifact.Energy {
	gpus := map[string]*gpuEnergy{}
	for i, s := range g.samplers {
		idle := map[string]*series{}
		if st := g.idle[i]; st != nil {
			for _, se := range st.byKey {
				idle[se.order] = se
			}
		}
		for _, se := range s.st.byKey {
			if (se.name != dcgmEnergy && se.name != dcgmPower) || se.labels[dcgmInstance] != "" || se.n == 0 {
				continue
			}
			key := gpuKey(i, se.labels)
			e := gpus[key]
			if e == nil {
				e = &gpuEnergy{}
				gpus[key] = e
			}
			e.seconds = max(e.seconds, se.lastAt/millisecondsPerS)
			before := idle[se.order]
			switch se.name {
			case dcgmEnergy:
				e.counterJ = se.increase / millijoulesPerJ
				e.counterMoved = se.n > 1 && se.increase > 0 && se.resets == 0
				if before != nil && se.first > before.last && g.idleSec[i] > 0 {
					e.idleCounterW = new((se.first - before.last) / millijoulesPerJ / g.idleSec[i])
				}
			case dcgmPower:
				e.powerJ, e.hasPow = se.area/wattMSPerJoule, true
				if before != nil {
					e.idlePow = new((before.last + se.first) / 2)
				}
			}
		}
	}
	en := &artifact.Energy{PerGPU: map[string]float64{}}
	var methods, idleMethods []string
	idleW, idleN := 0.0, 0
	for _, key := range slices.Sorted(maps.Keys(gpus)) {
		e := gpus[key]
		j, m, ok := e.joules()
		if !ok {
			continue
		}
		en.GPUs++
		en.Joules += j
		en.PerGPU[key] = j
		en.Seconds = max(en.Seconds, e.seconds)
		methods = append(methods, m)
		if w, m, ok := e.idle(); ok {
			idleW += w
			idleN++
			idleMethods = append(idleMethods, m)
		}
	}
	if en.GPUs == 0 {
		return nil
	}
	en.Method = methodOf(methods)
	if en.Seconds > 0 {
		en.MeanWatts = en.Joules / en.Seconds
	}
	if idleN == en.GPUs {
		// An idle baseline only when every counted GPU has one.
		en.IdleWatts, en.IdleMethod = new(idleW), methodOf(idleMethods)
		en.IdleJoules = new(idleW * en.Seconds)
		for _, s := range g.idleSec {
			en.IdleSeconds = max(en.IdleSeconds, s)
		}
	}
	out, _ := rep.CompletionTokens()
	total := out + rep.PromptTokensReported()
	if pr := probesOf(rep); pr != nil {
		out += pr.CompletionTokens
		total += pr.CompletionTokens
	}
	en.OutputTokens, en.TotalTokens = out, total
	en.PricePerGPUHour, en.PricePerKWh = g.pricePerGPUHour, g.pricePerKWh
	if out > 0 {
		en.JoulesPerOutputToken = new(en.Joules / float64(out))
		if en.IdleJoules != nil {
			en.ActiveJoulesPerOutputToken = new((en.Joules - *en.IdleJoules) / float64(out))
		}
		if p := en.PricePerGPUHour; p != nil {
			hours := float64(en.GPUs) * en.Seconds / secondsPerHour
			en.CostPerMillionOutputTokens = new(hours * *p / float64(out) * tokensPerMillion)
		}
		if p := en.PricePerKWh; p != nil {
			en.EnergyCostPerMillionOutputTokens = new(en.Joules / joulesPerKWh * *p / float64(out) * tokensPerMillion)
		}
	}
	if total > 0 {
		en.JoulesPerToken = new(en.Joules / float64(total))
	}
	return en
}

// methodOf is "counter" or "power" when every GPU's is that, else "mixed".
func methodOf(ms []string) string {
	slices.Sort(ms)
	if ms = slices.Compact(ms); len(ms) == 1 {
		return ms[0]
	}
	return energyMixed
}

// gpuKey names a GPU in anvil_go.energy.per_gpu: "host/gpu", its host
// as its labels name it (Hostname, or hostname), else its endpoint's
// index; its index (gpu), else its UUID.
func gpuKey(endpoint int, labels map[string]string) string {
	host := cmp.Or(labels["Hostname"], labels["hostname"], strconv.Itoa(endpoint))
	return host + "/" + cmp.Or(labels["gpu"], labels["UUID"])
}

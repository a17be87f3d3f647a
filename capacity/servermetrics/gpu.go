package servermetrics

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// maxGPUEndpoints bounds the endpoints of DiscoverGPUs: the nodes of one run.
const maxGPUEndpoints = 64

// maxIdleWindow bounds the idle window GPUs.Prime measures before the
// phase (one sampling interval, at most this): the run's start waits no
// longer for it.
const maxIdleWindow = maxRunWait

// CheckGPUs returns the error DiscoverGPUs would report for urls, the
// prices and c, other than the endpoints' answers, or nil: a
// *capacity.FieldError naming the field ("URLs", "PricePerGPUHour",
// "PricePerKWh", or c's), its value and the allowed range.
func (c Config) CheckGPUs(urls []string, pricePerGPUHour, pricePerKWh *float64) error {
	if len(urls) == 0 || len(urls) > maxGPUEndpoints {
		return configError("URLs", len(urls), fmt.Sprintf("must list 1..%d endpoints", maxGPUEndpoints), nil)
	}
	for _, u := range urls {
		if _, err := checkURL("URLs", u); err != nil {
			return err
		}
	}
	for _, p := range []struct {
		name string
		v    *float64
	}{{"PricePerGPUHour", pricePerGPUHour}, {"PricePerKWh", pricePerKWh}} {
		if p.v != nil && !(*p.v >= 0 && *p.v < 1e12) {
			return configError(p.name, *p.v, "must be a finite price >= 0", nil)
		}
	}
	return c.Check()
}

// gpuSet samples the DCGM exporters of a run's GPUs on the run's clock,
// beside the server's metrics, and computes the energy the phase spent:
// the Sampler DiscoverGPUs returns delegates to it its Prime (the idle
// window and the phase's first sample), Start, Finish (the last sample)
// and the end hook, which sets anvil_go.gpu_metrics and anvil_go.energy.
type gpuSet struct {
	cfg                          Config
	pricePerGPUHour, pricePerKWh *float64
	samplers                     []*Sampler
	idle                         []*store // each endpoint's idle-window sample, before Prime's
	idleSec                      []float64
}

// DiscoverGPUs GETs each of urls, the DCGM exporter endpoints of a run's
// GPUs (capacity/PROTOCOL.md#gpu_metrics), one a node, at most 64, once
// before the run, and returns the Sampler of them all, an observer of
// the run like the server's (Prime, Start, Finish; its end hook sets
// anvil_go.gpu_metrics and anvil_go.energy, and Stop returns nil). Each
// is sampled with c's settings (its URL ignored): its
// Interval, Timeout, Client, Header, Scrub and GPUs. The optional prices
// (nil for none, else finite and >= 0) give anvil_go.energy's costs per
// million output tokens. An endpoint that does not answer, or answers
// without the DCGM exporter's families, is an error wrapping
// ErrNoEndpoint (the user named it); a bad value is a
// *capacity.FieldError naming it (CheckGPUs).
func (c Config) DiscoverGPUs(ctx context.Context, urls []string, pricePerGPUHour, pricePerKWh *float64) (*Sampler, error) {
	if err := c.CheckGPUs(urls, pricePerGPUHour, pricePerKWh); err != nil {
		return nil, err
	}
	g := &gpuSet{cfg: c, pricePerGPUHour: pricePerGPUHour, pricePerKWh: pricePerKWh}
	for _, u := range urls {
		sc := c
		sc.URL, sc.Explicit = u, true
		s, err := Discover(ctx, sc)
		if err != nil {
			return nil, err
		}
		if s.engine != engineDCGM {
			return nil, fmt.Errorf("%w at %s: no DCGM exporter family (DCGM_FI_*): not a GPU metrics endpoint", ErrNoEndpoint, s.endpoint)
		}
		s.sizeFor(ctx)
		g.samplers = append(g.samplers, s)
	}
	g.idle = make([]*store, len(g.samplers))
	g.idleSec = make([]float64, len(g.samplers))
	return &Sampler{cfg: c, engine: engineDCGM, gpus: g}, nil
}

// sizeFor bounds the sampler's series to what its endpoint serves of the
// kept families, 64..160 (a node of more than 6 GPUs has more than 64),
// counted on one more GET; a failed GET leaves the default.
func (s *Sampler) sizeFor(ctx context.Context) {
	ctx, cancel := runWait(ctx)
	defer cancel()
	var c countSink
	if _, err := s.scrape(ctx, newSeriesFilter(&c, dcgmLabels, s.only())); err != nil {
		return
	}
	if n := min(c.n, maxMaxSeries); n > s.st.max {
		s.st.setMax(n)
	}
}

// countSink counts the samples it is given.
type countSink struct{ n int }

func (c *countSink) sample(*sampleView) { c.n++ }

// each runs f on every sampler at once and waits for them all, so that
// every node's sample is taken at the same moment of the run.
func (g *gpuSet) each(f func(i int, s *Sampler)) {
	var wg sync.WaitGroup
	for i, s := range g.samplers {
		wg.Go(func() { f(i, s) })
	}
	wg.Wait()
}

// prime measures the idle baseline and takes the phase's first sample,
// on the run's goroutine with nothing in flight (after the warm-up, just
// before the phase's clock starts): a sample of every endpoint, one
// sampling interval of idle GPUs (at most 2 s; cut short when ctx is
// done), then Sampler.Prime of every endpoint, the phase's offset 0.
// The idle power is the energy counters' rise over that window
// (capacity/PROTOCOL.md#energy).
func (g *gpuSet) prime(ctx context.Context) {
	begun := make([]time.Time, len(g.samplers))
	g.each(func(i int, s *Sampler) {
		st := newStore()
		st.scrub = s.st.scrub
		st.setMax(s.st.max)
		wctx, cancel := runWait(ctx)
		defer cancel()
		begun[i] = time.Now()
		st.begin()
		if _, err := s.scrape(wctx, newSeriesFilter(st, dcgmLabels, s.only())); err != nil {
			return // no idle window for this node
		}
		st.commit(0)
		g.idle[i] = st
	})
	t := time.NewTimer(min(g.cfg.resolvedInterval(), maxIdleWindow))
	select {
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
	}
	g.each(func(i int, s *Sampler) {
		at := time.Now()
		s.Prime(ctx)
		g.idleSec[i] = at.Sub(begun[i]).Seconds()
	})
}

// resolvedInterval is c's interval, its default for 0.
func (c Config) resolvedInterval() time.Duration {
	if c.Interval == 0 {
		return defaultInterval
	}
	return c.Interval
}

// start starts every endpoint's sampler on the run's clock. Its end hook
// stops them, computes the energy from their series and the report and
// sets anvil_go.gpu_metrics and anvil_go.energy.
func (g *gpuSet) start(ctx context.Context, runStart time.Time) func(rep *artifact.Report) {
	for _, s := range g.samplers {
		s.begin(ctx, runStart)
	}
	return func(rep *artifact.Report) {
		members := make([]artifact.ServerMetrics, len(g.samplers))
		for i, s := range g.samplers {
			members[i] = *s.Stop()
		}
		ext := rep.Extension()
		ext.GPUMetrics = members
		ext.Energy = g.energy(rep)
	}
}

// finish takes every endpoint's last sample at once when the measured
// phase ends (Sampler.Finish).
func (g *gpuSet) finish() {
	g.each(func(_ int, s *Sampler) { s.Finish() })
}

// gpuPairs is the label pairs of the GPUs named (Config.GPUs), or a
// *capacity.FieldError naming the first that is none of the forms.
func gpuPairs(gpus []string) ([]string, error) {
	var out []string
	for _, g := range gpus {
		switch {
		case strings.Contains(g, "="):
			out = append(out, g)
		case strings.HasPrefix(g, "GPU-") || strings.HasPrefix(g, "MIG-"):
			out = append(out, "UUID="+g)
		case g != "" && strings.Trim(g, "0123456789") == "":
			out = append(out, "gpu="+g)
		default:
			return nil, configError("Config.GPUs", g, `must be a GPU index (0), a UUID (GPU-... or MIG-...) or a label pair (Hostname=node-a)`, nil)
		}
	}
	return out, nil
}

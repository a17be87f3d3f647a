// Package probe sends the probe requests of a capacity run
// (Workload.ProbeRate, capacity/PROTOCOL.md#probe_requests): short
// requests sent beside the measured phase at a low rate, on a client of
// their own, outside Workload.Concurrency and outside the run's rows,
// metrics and counts, and reported on their own
// (anvil_go.probe_requests): the latency a new user sees while the server
// is busy.
//
// A Traffic is an Observer of package capacity: Start launches probes at
// Poisson arrivals of the rate, Finish (at the end of the measured phase)
// stops them, cancels those in flight and waits for them, and the func
// Start returned records what they saw.
package probe

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/stats"
)

// Bounds and constants of the probe requests.
const (
	// MinRate and MaxRate bound Workload.ProbeRate, probes per second: a
	// probe is a bystander, not load.
	MinRate = 0.001
	MaxRate = 10.0
	// MaxTokens is every probe's max_tokens: one token, so its latency is
	// the time to it.
	MaxTokens = 1
	// SeedStream is the PCG stream of the probes' gaps, the ASCII bytes of
	// "probereq": apart from the arrival schedule's.
	SeedStream = 0x70726f6265726571
)

// Message is the one user message of probe k: a few tokens, its own
// index so that no two probes share a cached answer.
func Message(k int) string {
	return fmt.Sprintf("anvil probe request %d: reply with one word.", k)
}

// A Traffic sends the probes of one run.
type Traffic struct {
	cl    *client.Client
	body  func(k int) (client.Body, error)
	rate  float64
	seed  int64
	close func() // releases the probes' connections

	cancel context.CancelFunc
	wg     sync.WaitGroup
	done   chan struct{} // closed when the dispatcher returned

	mu      sync.Mutex
	results []result
}

// result is one probe's outcome.
type result struct {
	ttfo, e2e float64 // ms after its send; valid when ok
	ok        bool
	cancelled bool   // in flight when the phase ended
	failure   string // "class: message" of a failed probe
	tokens    *int   // usage.completion_tokens, when reported
}

// New returns the probes of rate per second (in [MinRate, MaxRate]) sent
// by cl, their gaps drawn from seed; body builds probe k's request body
// (Message(k), MaxTokens), and close, when not nil, releases the probes'
// connections once they are done.
func New(cl *client.Client, body func(k int) (client.Body, error), rate float64, seed int64, close func()) *Traffic {
	if close == nil {
		close = func() {}
	}
	return &Traffic{cl: cl, body: body, rate: rate, seed: seed, close: close, done: make(chan struct{})}
}

// Start implements capacity.Observer: probes leave at Poisson arrivals of
// the probe rate from at, each gap an exponential draw from a PCG seeded
// with the seed.
func (p *Traffic) Start(ctx context.Context, at time.Time) func(*artifact.Report) {
	ctx, p.cancel = context.WithCancel(ctx)
	rng := rand.New(rand.NewPCG(uint64(p.seed), SeedStream))
	go func() {
		defer close(p.done)
		timer := time.NewTimer(time.Hour)
		defer timer.Stop()
		due := at
		for k := 0; ; k++ {
			due = due.Add(time.Duration(rng.ExpFloat64() / p.rate * float64(time.Second)))
			timer.Reset(time.Until(due))
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
			p.wg.Go(func() { p.send(ctx, k) })
		}
	}()
	return p.record
}

// Finish implements capacity.Finisher: the phase is over, so no probe
// leaves any more and those in flight are cancelled.
func (p *Traffic) Finish() {
	p.cancel()
	<-p.done
	p.wg.Wait()
	p.close()
}

// send sends probe k and files its outcome.
func (p *Traffic) send(ctx context.Context, k int) {
	res := result{}
	body, err := p.body(k)
	if err != nil {
		res.failure = err.Error()
		p.file(res)
		return
	}
	ex := client.Exchange{Index: k, Unmeasured: true, MaxTokens: MaxTokens}
	p.cl.Send(ctx, body, &ex)
	class, msg := ex.Failure()
	res.tokens = ex.CompletionTokens()
	switch {
	case class == artifact.FailureCancelled || ctx.Err() != nil && class != "":
		res.cancelled = true
	case class != "":
		res.failure = fmt.Sprintf("%s: %s", class, msg)
	case ex.FirstOutput().IsZero():
		res.failure = "the stream ended without an output token"
	default:
		res.ok = true
		res.ttfo, res.e2e = client.MS(ex.FirstOutput().Sub(ex.Start())), client.MS(ex.End().Sub(ex.Start()))
	}
	p.file(res)
}

func (p *Traffic) file(res result) {
	p.mu.Lock()
	p.results = append(p.results, res)
	p.mu.Unlock()
}

// record writes anvil_go.probe_requests into rep.
func (p *Traffic) record(rep *artifact.Report) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pr := &artifact.ProbeRequests{RateRPS: p.rate, MaxTokens: MaxTokens, Sent: len(p.results)}
	var ttfo, e2e []float64
	for _, r := range p.results {
		switch {
		case r.cancelled:
			pr.Cancelled++
		case r.ok:
			pr.Succeeded++
			ttfo, e2e = append(ttfo, r.ttfo), append(e2e, r.e2e)
		default:
			pr.Failed++
			if pr.FirstError == nil {
				pr.FirstError = new(p.cl.Scrub(r.failure))
			}
		}
		if r.tokens != nil {
			pr.CompletionTokens += *r.tokens
			pr.Reported++
		}
	}
	pr.TTFOMS, pr.E2EMS = quantiles(ttfo), quantiles(e2e)
	rep.Extension().ProbeRequests = pr
}

// quantiles are the nearest-rank quantiles of xs; nil when empty.
func quantiles(xs []float64) *artifact.Quantiles {
	if len(xs) == 0 {
		return nil
	}
	slices.Sort(xs)
	return &artifact.Quantiles{P50: stats.Percentile(xs, 50), P90: stats.Percentile(xs, 90), P99: stats.Percentile(xs, 99), Max: xs[len(xs)-1]}
}

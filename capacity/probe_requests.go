package capacity

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/stats"
)

// Probe requests (Workload.ProbeRate, capacity/PROTOCOL.md#probe_requests):
// short requests sent beside the measured phase at a low rate, on a client
// of their own, outside Workload.Concurrency and outside the run's rows,
// metrics and counts, and reported on their own: the latency a new user
// sees while the server is busy.

// Bounds and constants of the probe requests.
const (
	// minProbeRate and maxProbeRate bound Workload.ProbeRate, probes per
	// second: a probe is a bystander, not load.
	minProbeRate = 0.001
	maxProbeRate = 10.0
	// probeMaxTokens is every probe's max_tokens: one token, so its
	// latency is the time to it.
	probeMaxTokens = 1
	// probeSeedStream is the PCG stream of the probes' gaps, the ASCII
	// bytes of "probereq": apart from the arrival schedule's.
	probeSeedStream = 0x70726f6265726571
)

// probeMessage is the conversation of probe k: a few tokens, its own index
// so that no two probes share a cached answer.
func probeMessage(k int) []Message {
	return []Message{{Role: "user", Content: fmt.Sprintf("anvil probe request %d: reply with one word.", k)}}
}

// probeTraffic is the Observer that sends them. Start launches the
// dispatcher; Finish, at the end of the measured phase, stops it, cancels
// the probes still in flight and waits for them; the end func records
// anvil_go.probe_requests.
type probeTraffic struct {
	cl     *client.Client
	bodies *sourceBodies
	rate   float64
	seed   int64
	close  func() // releases the probes' connections

	cancel context.CancelFunc
	wg     sync.WaitGroup
	done   chan struct{} // closed when the dispatcher returned

	mu      sync.Mutex
	results []probeResult
}

// probeResult is one probe's outcome.
type probeResult struct {
	ttfo, e2e float64 // ms after its send; valid when ok
	ok        bool
	cancelled bool   // in flight when the phase ended
	failure   string // "class: message" of a failed probe
	tokens    *int   // usage.completion_tokens, when reported
}

// newProbeTraffic makes the probes of w against t, on an HTTP client of
// their own (a clone of the run's transport, so that a probe never takes a
// measured request's connection), with the run's body fields; nil when w
// sends none.
func newProbeTraffic(t Target, w Workload, key string, bodies *sourceBodies) (*probeTraffic, error) {
	if w.ProbeRate == 0 {
		return nil, nil
	}
	hc, own := t.HTTPClient, (*http.Transport)(nil)
	switch tr, ok := transportOf(hc); {
	case hc == nil:
		own = newTransport(1)
	case ok:
		own = tr.Clone()
	}
	if own != nil {
		hc = &http.Client{Transport: own, CheckRedirect: noRedirects}
	}
	hc, _ = client.WithConnectionRule(hc, own)
	cl, err := client.New(clientConfig(t, w, hc, key))
	if err != nil {
		return nil, err
	}
	p := &probeTraffic{cl: cl, bodies: bodies, rate: w.ProbeRate, seed: w.Seed, close: func() {}, done: make(chan struct{})}
	if own != nil {
		p.close = own.CloseIdleConnections
	}
	return p, nil
}

// transportOf is hc's *http.Transport, when it has one.
func transportOf(hc *http.Client) (*http.Transport, bool) {
	if hc == nil {
		return nil, false
	}
	tr, ok := hc.Transport.(*http.Transport)
	return tr, ok
}

// Start implements Observer: probes leave at Poisson arrivals of the
// probe rate from at, each gap an exponential draw from a PCG seeded with
// Workload.Seed.
func (p *probeTraffic) Start(ctx context.Context, at time.Time) func(*artifact.Report) {
	ctx, p.cancel = context.WithCancel(ctx)
	rng := rand.New(rand.NewPCG(uint64(p.seed), probeSeedStream))
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

// Finish implements the optional Finisher: the phase is over, so no probe
// leaves any more and those in flight are cancelled.
func (p *probeTraffic) Finish() {
	p.cancel()
	<-p.done
	p.wg.Wait()
	p.close()
}

// send sends probe k and files its outcome.
func (p *probeTraffic) send(ctx context.Context, k int) {
	res := probeResult{}
	sb, err := p.bodies.build(k, Request{Messages: probeMessage(k), MaxTokens: probeMaxTokens})
	if err != nil {
		res.failure = err.Error()
		p.file(res)
		return
	}
	ex := client.Exchange{Index: k, Unmeasured: true, MaxTokens: probeMaxTokens}
	p.cl.Send(ctx, sb.body, &ex)
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

func (p *probeTraffic) file(res probeResult) {
	p.mu.Lock()
	p.results = append(p.results, res)
	p.mu.Unlock()
}

// record writes anvil_go.probe_requests into rep.
func (p *probeTraffic) record(rep *artifact.Report) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pr := &artifact.ProbeRequests{RateRPS: p.rate, MaxTokens: probeMaxTokens, Sent: len(p.results)}
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
	pr.TTFOMS, pr.E2EMS = probeQuantiles(ttfo), probeQuantiles(e2e)
	rep.Extension().ProbeRequests = pr
}

// probeQuantiles are the nearest-rank quantiles of xs; nil when empty.
func probeQuantiles(xs []float64) *artifact.Quantiles {
	if len(xs) == 0 {
		return nil
	}
	slices.Sort(xs)
	return &artifact.Quantiles{P50: stats.Percentile(xs, 50), P90: stats.Percentile(xs, 90), P99: stats.Percentile(xs, 99), Max: xs[len(xs)-1]}
}

package capacity

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/anvilbench/anvil/capacity/internal/audit"
	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/field"
	"github.com/anvilbench/anvil/capacity/servermetrics"
)

// The observers every run has (capacity/PROTOCOL.md#server_metrics and
// #audit): the client's self-audit, always, and the server-metrics
// sampler when the server has a metrics endpoint. Neither ever fails a
// run once it is measuring; both run before Workload.Observers, so those
// see the members they fill.

// The built-in observers take their end readings in Finish.
var (
	_ Finisher = (*audit.Observer)(nil)
	_ Finisher = (*servermetrics.Sampler)(nil)
)

// primeObservers lets every built-in observer that takes a first sample
// take it now, on the goroutine that called Run, with nothing in flight:
// after the warm-up and the connection warm-up, before the phase's clock.
func primeObservers(ctx context.Context, obs []Observer) {
	for _, o := range obs {
		if p, ok := o.(interface{ Prime(context.Context) }); ok {
			p.Prime(ctx)
		}
	}
}

// finishObservers calls Finish on every observer that is a Finisher (the
// audit's end readings, the sampler's last sample; a Workload.Observers
// entry may be one too), in order, on the goroutine that
// called Run, when the measured phase ends: every measured request has
// ended, before the report is assembled, so that neither the assembly
// nor anything after the phase is measured.
func finishObservers(obs []Observer) {
	for _, o := range obs {
		if f, ok := o.(Finisher); ok {
			f.Finish()
		}
	}
}

// validateMetrics checks Target.MetricsURL and Target.MetricsInterval.
func (t Target) validateMetrics(v *validator) {
	if err := (servermetrics.Config{Interval: t.MetricsInterval}).Check(); err != nil {
		rule := err.Error()
		if fe, ok := errors.AsType[*field.Error](err); ok {
			rule = fe.Rule
		}
		v.add("Target.MetricsInterval", t.MetricsInterval, "%s", rule)
	}
	if len(t.GPUMetricsURLs) == 0 && (t.PricePerGPUHour != nil || t.PricePerKWh != nil) {
		v.add("Target.GPUMetricsURLs", "none", "must name the GPUs' DCGM exporters when a price is set (Target.PricePerGPUHour, Target.PricePerKWh)")
	}
	if len(t.GPUMetricsURLs) > 0 {
		if err := t.gpuConfig(nil).CheckGPUs(t.GPUMetricsURLs, t.PricePerGPUHour, t.PricePerKWh); err != nil {
			rule := err.Error()
			shown := make([]string, len(t.GPUMetricsURLs))
			for i, u := range t.GPUMetricsURLs {
				shown[i] = client.DisplayURL(u)
			}
			name, value := "Target.GPUMetricsURLs", any(shown)
			if fe, ok := errors.AsType[*field.Error](err); ok {
				rule = fe.Rule
				switch fe.Field {
				case "PricePerGPUHour":
					name, value = "Target.PricePerGPUHour", *t.PricePerGPUHour
				case "PricePerKWh":
					name, value = "Target.PricePerKWh", *t.PricePerKWh
				case "Config.GPUs":
					name, value = "Target.GPUs", fe.Value
				case "Config.Interval":
					name = "" // reported as Target.MetricsInterval
				}
			}
			if name != "" {
				v.add(name, value, "%s", rule)
			}
		}
	}
	if t.MetricsURL == "" || t.BaseURL == "" {
		return
	}
	if _, err := servermetrics.EndpointURL(t.BaseURL, t.MetricsURL); err != nil {
		v.add("Target.MetricsURL", client.DisplayURL(t.MetricsURL), "must be an http or https URL with a host, or %q", servermetrics.Off)
	}
}

// builtinObservers discovers the metrics endpoint of t (once, before the
// run) and returns the built-in observers and a func that releases the
// sampler's connection when the run is over. The sampler never shares the
// measured requests' pool: it has a client of its own, which clones
// Target.HTTPClient's transport when there is one (so it reaches the same
// server by the same dialer, on a connection of its own), except for a
// transport that is not an *http.Transport, which it then uses as it is. The GETs carry
// t's headers and bearer token; scrub is the run's redactor.
//
// An endpoint the user named in Target.MetricsURL that does not answer is
// an error wrapping servermetrics.ErrNoEndpoint, before anything is
// measured; the default endpoint is silently absent.
func builtinObservers(ctx context.Context, t Target, key string, scrub func(string) string) ([]Observer, func(), error) {
	obs := []Observer{&audit.Observer{}}
	release := func() {}
	if len(t.GPUMetricsURLs) > 0 {
		cfg := t.gpuConfig(scrub)
		if t.HTTPClient != nil {
			// The way to the exporters is the caller's (a proxy, a dialer).
			var done func()
			cfg.Client, done = samplerClient(t)
			release = done
		}
		g, err := cfg.DiscoverGPUs(ctx, t.GPUMetricsURLs, t.PricePerGPUHour, t.PricePerKWh)
		_, invalid := errors.AsType[*field.Error](err)
		switch {
		case invalid:
			return nil, release, fmt.Errorf("%w: Target.GPUMetricsURLs: %w", ErrInvalidConfig, err)
		case err != nil && ctx.Err() != nil:
		case err != nil:
			return nil, release, fmt.Errorf("Target.GPUMetricsURLs: %w", err)
		default:
			obs = append(obs, g)
		}
	}
	u, err := servermetrics.EndpointURL(t.BaseURL, t.MetricsURL)
	if err != nil {
		return nil, release, fmt.Errorf("%w: Target.MetricsURL: %w", ErrInvalidConfig, err)
	}
	if u == "" {
		return obs, release, nil
	}
	gpuRelease := release
	client, own := samplerClient(t)
	release = func() { gpuRelease(); own() }
	header := t.Headers.Clone()
	if header == nil {
		header = http.Header{}
	}
	if key != "" {
		header.Set("Authorization", "Bearer "+key)
	}
	s, err := servermetrics.Discover(ctx, servermetrics.Config{
		URL: u, Explicit: t.MetricsURL != "", Interval: t.MetricsInterval,
		Client: client, Header: header, Scrub: scrub,
	})
	_, invalid := errors.AsType[*field.Error](err)
	switch {
	case invalid:
		return nil, release, fmt.Errorf("%w: Target.MetricsURL, Target.MetricsInterval: %w", ErrInvalidConfig, err)
	case err != nil && ctx.Err() != nil:
		return obs, release, nil // cancelled: the run reports what it did not send
	case err != nil:
		return nil, release, err
	case s != nil:
		obs = append(obs, s)
	}
	return obs, release, nil
}

// gpuConfig is the GPU samplers' configuration of t: the GPUs it names
// and the metrics interval. The samplers have clients of their own and
// send none of t's headers.
func (t Target) gpuConfig(scrub func(string) string) servermetrics.Config {
	return servermetrics.Config{Interval: t.MetricsInterval, Scrub: scrub, GPUs: t.GPUs}
}

// samplerClient is a sampler's own client and the func that closes its
// connection, even when the run ends before the sampler started: a clone
// of Target.HTTPClient's transport (or of http.DefaultTransport) holding
// one connection a host and following no redirect, or, for a transport
// that is not an *http.Transport, Target.HTTPClient itself.
func samplerClient(t Target) (*http.Client, func()) {
	client := t.HTTPClient
	base, _ := http.DefaultTransport.(*http.Transport)
	if client != nil {
		base, _ = client.Transport.(*http.Transport)
	}
	if base == nil {
		return client, func() {}
	}
	own := base.Clone()
	own.MaxIdleConnsPerHost, own.MaxConnsPerHost = 1, 1
	return &http.Client{Transport: own, CheckRedirect: noRedirects}, own.CloseIdleConnections
}

package capacity

import (
	"net/http"

	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/probe"
)

// Probe requests (Workload.ProbeRate) are sent by package internal/probe
// (capacity/PROTOCOL.md#probe_requests) on a client of their own.

// newProbeTraffic makes the probes of w against t, on an HTTP client of
// their own (a clone of the run's transport, so that a probe never takes a
// measured request's connection), with the run's body fields; nil when w
// sends none.
func newProbeTraffic(t Target, w Workload, key string, bodies *sourceBodies) (*probe.Traffic, error) {
	if w.ProbeRate == 0 {
		return nil, nil
	}
	hc, own := t.HTTPClient, (*http.Transport)(nil)
	var release func()
	switch tr, ok := transportOf(hc); {
	case hc == nil:
		own = newTransport(1)
		hc, release = ownClient(own)
	case ok:
		own = tr.Clone()
		hc, release = &http.Client{Transport: own, CheckRedirect: noRedirects}, own.CloseIdleConnections
	}
	hc, _ = client.WithConnectionRule(hc, own)
	cl, err := client.New(clientConfig(t, w, hc, key))
	if err != nil {
		return nil, err
	}
	return probe.New(cl, func(k int) (client.Body, error) {
		sb, err := bodies.build(k, Request{Messages: []Message{{Role: "user", Content: probe.Message(k)}}, MaxTokens: probe.MaxTokens})
		return sb.body, err
	}, w.ProbeRate, w.Seed, release), nil
}

// transportOf is hc's *http.Transport, when it has one.
func transportOf(hc *http.Client) (*http.Transport, bool) {
	if hc == nil {
		return nil, false
	}
	tr, ok := hc.Transport.(*http.Transport)
	return tr, ok
}

// The probes are an Observer that stops at the end of the phase.
var (
	_ Observer = (*probe.Traffic)(nil)
	_ Finisher = (*probe.Traffic)(nil)
)

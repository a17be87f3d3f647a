// Package servermetrics samples a serving engine's own Prometheus
// /metrics endpoint during a capacity run's measured phase, so a capacity
// curve can say why it bent: the queue grew, the KV cache filled, requests
// were preempted. The result is the anvil_go.server_metrics member of the
// artifact (package artifact), documented key by key in
// capacity/PROTOCOL.md#anvil-go.
//
// A run uses it in three steps, on the run-observer seam of package
// capacity:
//
//	u, err := servermetrics.EndpointURL(baseURL, override) // override: a URL, "off" or ""
//	s, err := servermetrics.Discover(ctx, servermetrics.Config{URL: u, Explicit: override != "", Scrub: redact})
//	...                         // nil s: nothing to sample
//	s.Start(ctx, runStart)      // the measured phase starts
//	m := s.Stop()               // it ended: anvil_go.server_metrics
//	m.Checks = servermetrics.Check(m, servermetrics.FactsOf(report))
//
// Observer wraps a Sampler in the shape of capacity.Observer (its Start
// returns the end hook that stops it, computes the checks from the report
// and sets the member), so a run can take it as one of its observers.
//
// Discover is silent (a nil Sampler) when the server has no endpoint. The
// Sampler GETs the endpoint on its own goroutine and connection, every
// interval, each GET under its own timeout; failures are counted, never
// returned. Parse reads the text format with the format's own parser
// (github.com/prometheus/common/expfmt) and keeps each engine's curated
// families (curated.go), recognised by their names' prefix, plus any the
// user names. The member is bounded (series.go): 240
// points per series, downsampled keeping the max, 64 series, and
// under 2 MiB in all. Check holds the server's counters to the
// run's own measurements (checks.go).
//
// The package imports package artifact, never package capacity.
package servermetrics

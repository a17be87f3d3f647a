// Package servermetrics samples a serving engine's own Prometheus
// /metrics endpoint during a capacity run's measured phase, so a capacity
// curve can say why it bent: the queue grew, the KV cache filled, requests
// were preempted. The result is the anvil_go.server_metrics member of the
// artifact (package artifact), documented key by key in
// capacity/PROTOCOL.md#anvil-go.
//
// A run uses it in these steps, on the run-observer seam of package
// capacity:
//
//	u, err := servermetrics.EndpointURL(baseURL, override) // override: a URL, "off" or ""
//	s, err := servermetrics.Discover(ctx, servermetrics.Config{URL: u, Explicit: override != "", Scrub: redact})
//	...                           // nil s: nothing to sample
//	s.Prime(ctx)                  // the first sample, nothing in flight
//	end := s.Start(ctx, runStart) // the measured phase starts
//	s.Finish()                    // it ended: the last sample, at the phase's end
//	end(report)                   // report's anvil_go.server_metrics, with its checks
//
// A *Sampler has the shape of capacity.Observer (its Start returns the end
// hook that computes the checks from the report and sets the member) with
// the optional Finish that capacity.Run calls when the measured phase
// ends, so a run takes it as one of its observers. Users configure it
// through capacity.Target (MetricsURL, MetricsInterval); the conformance
// suite's metrics check is Probe.
//
// Discover is silent (a nil Sampler) when the server has no endpoint. The
// Sampler GETs the endpoint on its own goroutine and connection, every
// interval, each GET under its own timeout; failures are counted, never
// returned. A body is read as it arrives, a line at a time (scan.go),
// keeping each engine's curated families (curated.go), recognised by
// their names' prefix, plus any the user names: a line of any other family
// costs its name, never a label or an allocation, so a sample's cost is
// bounded by what it keeps whatever the server exposes. The reader keeps
// what the format's own parser (github.com/prometheus/common/expfmt)
// reads of any body it accepts (oracle_test.go); Probe, the conformance
// check, judges the body with expfmt itself. The member is bounded
// (series.go): 240 points per series, downsampled keeping the max, 64
// series, and under 2 MiB in all.
// The cross-checks hold the server's counters to the run's own
// measurements (checks.go). A bad Config is a *capacity.FieldError
// naming the field; Config.Check reports it before anything is sent.
//
// The package imports package artifact (and capacity/internal/field),
// never package capacity.
package servermetrics

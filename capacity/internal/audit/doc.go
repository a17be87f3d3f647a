// Package audit is the client's audit of itself during a capacity run:
// did the benchmark distort its own timings? It reads the Go runtime's
// scheduler latency and GC pauses (runtime/metrics), how late its own
// timer wake-ups run and how much of that its own work held them up (a
// probe: wake.go), the process's CPU use
// as a share of GOMAXPROCS, and facts the engine passes in (the open
// loop's send lag, waits for a pooled connection), and judges them by a
// documented rule (Judge), each distortion weighed against the run's own
// timings it can corrupt (Resolution: TTFT and inter-chunk gap p50s):
// "ok", or "suspect" with one reason per rule that fired. The result is the anvil_go.audit member of the artifact
// (package artifact), documented key by key in
// capacity/PROTOCOL.md#anvil-go.
//
// A run uses it on the run-observer seam of package capacity:
//
//	rec := audit.Start(ctx)             // the measured phase starts
//	...
//	rec.Finish()                        // it ended
//	a := rec.Stop(audit.Inputs{...})    // the report is in: anvil_go.audit
//
// Observer is the same in the shape of capacity.Observer, its inputs read
// from the report's anvil_go.requests and metrics (InputsOf).
//
// The package imports package artifact and package stats, never package
// capacity.
package audit

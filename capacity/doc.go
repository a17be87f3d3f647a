// Package capacity is the measurement engine of anvil: it runs the capacity
// protocol of the anvil-serving.benchmark/v1 artifact against an
// OpenAI-compatible endpoint that streams chat completions.
//
// A run is described by a Target (where to send, and the identity recorded
// with the result) and a Workload (what to send). Before any request is
// issued the run is resolved into a deterministic plan: the planned context
// of every request index, drawn from a seeded generator that reproduces the
// reference tool's draws bit for bit (SampleContexts), and the canary marker
// of every index. Each prompt is built by the worker that sends it
// (Plan.AppendPrompt into a reused buffer), so memory scales with the
// concurrency, not the number of requests. The visible content of a
// response is kept in a bounded Capture on which the request-canary
// (CheckCanary) and controlled-output (CheckControlledOutput) contracts are
// checked.
//
// Run executes a campaign and returns a Report, the v1 artifact model.
//
// The package never imports testing; the testing.B integration lives in
// package anviltest.
package capacity

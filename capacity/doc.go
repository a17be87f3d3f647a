// Package capacity is the measurement engine of anvil: it runs the capacity
// protocol of the anvil-serving.benchmark/v1 artifact against an
// OpenAI-compatible endpoint that streams chat completions, and returns the
// artifact (package artifact) of the run.
//
// A run is described by a Target (where to send, and the identity recorded
// with the result) and a Workload (what to send); Run executes it. Every
// rule the engine follows (the request body, the clock, each failure class,
// the prompt layout, the bounds, the artifact keys) is written down for
// users in the protocol reference, capacity/PROTOCOL.md.
//
// Reading the code, in the order a run goes:
//
//   - target.go, workload.go, validate.go: the configuration, its defaults
//     and bounds, and FieldError (field, value, rule) for every mistake;
//     errors.go holds the sentinel errors.
//   - run.go: Run. It resolves the configuration, probes the model's context
//     length (model_probe.go) when it is not given, and builds the plan.
//   - plan.go, context_draw.go, mersenne_twister.go, prompt.go: the plan is
//     resolved before any request is sent: the planned context of every
//     request index, drawn from a generator that reproduces the reference
//     tool's draws bit for bit, and each prompt (prompt.go: the layout; the
//     request bodies stream it, see body_stream.go).
//   - prompt_sizing.go, tokenize_client.go, calibration.go: exact-token
//     sizing (Workload.PromptSizing): the server's /tokenize or calibration
//     requests grown from a small prompt, before the warm-up, choose each
//     prompt's character budget, within the bounds of what sizing believes
//     (maxCharsPerToken); window_refusal.go reads the counts of an
//     over-window refusal; plan_check.go says when counted prompts are off
//     their plan (maxPlanDeviation).
//   - seams.go: the three seams of a run, each an interface with a func
//     adapter: a Source (what measured request i is: a Request), a
//     Schedule (when it is due: DueNow, DueAt, DueAfter), Observers (told
//     when the measured phase starts and ends; a Gate admits each
//     request). The synthetic plan is one Source (source_body.go builds
//     the bodies of the others), the closed loop and the arrival schedule
//     are Schedules; Workload.Source, Schedule and Observers plug others in.
//   - dispatch.go: the measured phase: one dispatcher on the goroutine
//     that called Run sends request i once it is due, a slot of
//     Concurrency is free and every Gate admits it.
//   - runner.go: one request sent and evaluated, the results recorded, the
//     warm-up's closed loop of workers, the stop on a refusing endpoint,
//     progress; early_stop.go: the stop when the first requests all fail
//     for a reason that will not change.
//   - openloop_workload.go, openloop.go: the open loop (Workload.Rate): the
//     arrival schedule computed before the run (package internal/arrival),
//     which the dispatcher follows with Concurrency as the in-flight cap,
//     anvil_go.arrival.
//   - shard.go: one shard of a workload split over several load
//     generators (Workload.Shard): the shard's requests of the global
//     plan (index mod Count), its share of the concurrency (shareOf), the
//     wait for the common start, the plan fingerprint and anvil_go.shard,
//     which merge.Shards (package capacity/merge) needs.
//   - slo.go, search.go: SLOs judged on a report (goodput), and the
//     concurrency and rate searches for the highest load that meets one.
//   - exchange.go, request_body.go: one request: the body, the clock (t0 is
//     taken immediately before the request is issued), the limits;
//     stall_watch.go: the stall limit, an atomic store per read.
//   - body_stream.go, prompt_layout.go: request bodies streamed from the
//     run's shared, already escaped prompt lines, the request's own few
//     bytes and its filler generated as the transport reads it (byte for
//     byte the body of prompt.go's prompt), so a request in flight holds a
//     few hundred bytes whatever its prompt's size.
//   - prewarm.go: the connection warm-up before the clock (as many live
//     connections as requests in flight).
//   - sse_body.go, stream_read.go, chunk_decode.go and package sse: the
//     response: the body wrapper that tells a clean end from a drop, the
//     SSE framing (go-sse's rules, without allocating), the event loop
//     that stamps every event on arrival, and the decoding of each chunk
//     (package internal/chunk, allocation-free); chunk_timing.go: the gaps
//     between output chunks and the stalls of every stream (package
//     internal/itl), per worker, merged per run.
//   - evaluate.go, visible_capture.go, canary.go, controlled_output.go: one
//     response becomes a timing row or a failure row: the protocol's
//     derivations, the bounded capture of visible content and the contracts
//     checked on it.
//   - content_encoding.go: gzip and deflate bodies decoded as they arrive.
//   - connection_rule.go, peer_closed_*.go: the one connection rule of
//     every client of a run (connectionRule): what is sent again and
//     when, and a server that closes kept-alive connections after
//     answering, served without reuse once seen; stale_connection.go: the
//     httptrace record of each request's attempts (the phases of
//     anvil_go.requests[i]).
//   - usage_check.go: usage is input: counts checked before use.
//   - error_type.go: the error_type words of every failure.
//   - discover.go, model_probe.go, context_discovery.go, slots.go: the
//     model and its window, from the Target or /models, llama.cpp's and
//     ollama's own endpoints (always asked, to name a declared window
//     that disagrees), llama.cpp's slots, with where each came from
//     (Discover asks the same questions without a run, as the
//     conformance suite does).
//   - extra_body.go: Target.ExtraBody as the artifact records it.
//   - secrets.go: the credentials a run knows, removed from every message
//     (the one scrubber every server-provided string passes).
//   - report_assemble.go, methodology.go, identity.go: the artifact of the
//     run: run id, timestamps, workload echo, population accounting, the
//     timing methodology sentences; then artifact.Report.Recompute.
//
// The package never imports testing; the testing.B integration lives in
// package anviltest.
package capacity

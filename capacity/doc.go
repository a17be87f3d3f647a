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
// # A run
//
// Run goes through these steps, each a part of the API:
//
//   - Configuration: Target.Resolved and Workload.Resolved fill in the
//     defaults and check every bound; each mistake is a *FieldError
//     (field, value, rule) wrapping ErrInvalidConfig.
//   - Discovery: the model and its context window, from the Target or
//     the server (GET /models, llama.cpp's /props and /slots, Ollama's
//     /api/ps and /api/show), with where each came from. Discover asks the
//     same questions without a run and returns the Discovery.
//   - The plan, resolved before any request is sent: the planned context
//     of every request index (fixed, or drawn from the reference tool's
//     seeded buckets), each prompt's layout and, with PromptSizing
//     "exact", each prompt's size in the server's own tokens, learned from
//     its tokenizer or from unmeasured calibration requests.
//   - The warm-up (Workload.Warmup), then the connections opened before
//     the clock: as many as requests will be in flight.
//   - The measured phase, through three seams, each an interface with a
//     func adapter: a Source says what measured request i is (a Request;
//     an Answerer also learns what each answered, a SizedSource sizes its
//     own prompts with the server's counts, a Sizer), a Schedule when it is
//     due (DueNow for the closed loop, DueAt for an arrival schedule or a
//     trace, DueAfter for a session's next turn), and Observers are told
//     when the phase starts and ends (a Gate also admits each request).
//     The synthetic plan is one Source; the closed loop and Workload.Rate's
//     open loop are Schedules. At most Workload.Concurrency requests are in
//     flight; Progress reports the run as it goes.
//   - Each request: t0 immediately before it is issued, every stream event
//     stamped on arrival, usage checked before use, the request canary and
//     the controlled output checked on its visible content; it ends as a
//     timing row or a failure row with its failure class. The early stop
//     ends a run whose first requests all fail for a reason that will not
//     change (ErrStoppedEarly); a refusing endpoint stops it at once
//     (ErrEndpointRefused).
//   - The report: the rows, the workload echoed, the timing methodology,
//     the anvil_go extension (per-request clocks and phases, chunk timing,
//     connections, the window, the server's metrics and the client's
//     self-audit), recomputed by artifact.Report.Recompute.
//
// A Shard makes a run one of several load generators measuring one
// workload from a common start (ErrShardLate when it is not ready in
// time); merge.Shards (package capacity/merge) joins their artifacts. An SLO judges a report
// (goodput), and Search finds the highest concurrency or rate that meets
// one, through a Prober (RunProber runs each probe).
//
// No report and no error carries a credential of the run: Target.Redactor
// is the scrubber Run applies to every server-provided string. A tool that
// talks to the endpoint itself uses NewConnectionRule, the connection rule
// of every client of a run, and MaxEventSize, the largest event the client
// accepts.
//
// The package never imports testing; the testing.B integration lives in
// package anviltest.
package capacity

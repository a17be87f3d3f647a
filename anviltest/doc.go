// Package anviltest runs capacity benchmarks of OpenAI-compatible streaming
// endpoints as ordinary Go benchmarks.
//
//	func BenchmarkCapacity(b *testing.B) {
//		for _, conc := range []int{1, 4, 16} {
//			b.Run(fmt.Sprintf("ctx=32768/conc=%d", conc), func(b *testing.B) {
//				anviltest.Capacity(b, capacity.Workload{
//					ContextTokens: 32768, Concurrency: conc,
//					MaxTokens: 1024, // room to think before the answer
//				})
//			})
//		}
//	}
//
//	func TestMain(m *testing.M) { anviltest.Main(m) }
//
// MaxTokens defaults to 1024, room for a reasoning model such as the
// embedded fake server's default profile to think before it answers;
// MaxTokens 64 sends the reference tool's requests byte for byte. Main
// prints the run's identity (model, engine, gpu, target, the fake's
// profile) as benchfmt configuration before the benchmarks, so go test
// output says what ran.
//
// Run them with
//
//	go test -bench Capacity -run '^$' ./yourpkg
//
// Without ANVIL_BASE_URL the benchmarks run against an embedded fake server
// (package fakeserver, profile "reasoning" unless ANVIL_FAKE_PROFILE names
// another, time-scaled by 0.05 unless ANVIL_FAKE_TIME_SCALE says), so the
// command works anywhere and prints real
// numbers of a simulated engine.
//
// # Iterations
//
// One benchmark iteration is one measured request. -benchtime Nx runs
// exactly N requests; a time-based -benchtime (the default 1s included) is
// the length of a closed-loop campaign after which no request is
// dispatched and in-flight ones finish; Workload.Requests, Burst or
// Duration override -benchtime. ns/op is wall time per measured request,
// drain included. Use -count 10 for benchstat comparisons.
//
// # Open loops, SLOs and sweeps
//
// A Workload with a Rate (or ANVIL_RATE, ANVIL_ARRIVAL, ANVIL_BURSTINESS)
// is an open loop: requests leave at a precomputed arrival schedule and
// Concurrency caps those in flight. -benchtime Nx is then N scheduled
// requests, a time-based -benchtime a schedule of that length. WithSLO or
// ANVIL_SLO_TTFT, ANVIL_SLO_TPOT, ANVIL_SLO_E2E and ANVIL_SLO_ATTAINMENT
// judge every run against a capacity.SLO (anvil_go.slo) and add the
// goodput-req/s metric. Sweep runs a capacity.Search, one sub-benchmark per
// probe, and reports best-conc or best-req/s in its /best sub-benchmark.
//
// # Metrics
//
// Every benchmark line carries the units of reporters.BenchResult, a stable
// set (medians over successful requests unless named otherwise):
//
//	ns/op              wall time per measured request sent, drain included
//	ttft-p50-ms        time to first visible content, p50
//	ttft-p95-ms        time to first visible content, p95
//	ttfo-p50-ms        time to first output (reasoning or content), p50
//	tpot-ms            generation time per decode token, p50
//	decode-tok/s       per-request decode rate, p50
//	prefill-tok/s      prompt tokens per second of time to first output, p50
//	e2e-p50-ms         request start to end of stream, p50
//	output-tok/s       output tokens per wall second of the run (eligible runs only)
//	cache-hit-%        mean prefix-cache hit rate (when the server reports cached tokens)
//	failed-req         requests sent that failed and are no latency samples
//	unsent-req         planned requests never sent (interrupted or stopped runs; only when > 0)
//	itl-p99-ms         p99 of the gaps between output chunks, over all successful requests
//	tokens/chunk       completion tokens per output chunk (a server that batches tokens sends more)
//	goodput-req/s      requests meeting the SLO per wall second (runs with an SLO)
//	sched-ttft-p50-ms  open loops: TTFT from each request's scheduled time (its wait for the in-flight cap included), p50
//	sched-ttft-p95-ms  the same, p95
//	sched-e2e-p50-ms   open loops: end-to-end time from the scheduled time, p50
//
// A null metric (no sample, not eligible, not reported by the server) is
// omitted, never printed as NaN. Failed or contract-invalid requests are
// never latency samples; they count in failed-req and are logged by class.
// A run in which no request succeeded has no latency sample at all: its
// report is written, and the benchmark fails instead of printing a line.
//
// # Configuration
//
// The target comes from WithTarget and then from the environment. Every
// variable anviltest reads, the field it fills and what it takes:
//
//	ANVIL_BASE_URL                   Target.BaseURL: the API root, an http(s) URL (unset: the embedded fake server)
//	ANVIL_MODEL                      Target.Model: a model id (unset: asked of /models)
//	ANVIL_API                        Target.API: the API the requests speak: chat (default), responses, messages, completions or embeddings
//	ANVIL_API_KEY_ENV                Target.APIKeyEnv: the name of the variable holding the key, which is never written anywhere
//	ANVIL_ENGINE                     Target.Engine: an engine identity such as vllm-0.11.0
//	ANVIL_GPU                        Target.GPU: a GPU identity such as h100-80gb
//	ANVIL_MAX_MODEL_LEN              Target.MaxModelLen: the context window, an integer
//	ANVIL_EXTRA_BODY                 Target.ExtraBody: a JSON object merged into every request body, such as llama.cpp's {"cache_prompt":false}; part of the run's identity
//	ANVIL_CLOCK_DOMAIN_ID            Target.ClockDomainID: the name of a wall clock machines share
//	ANVIL_CONFIGURATION_FINGERPRINT  Target.ConfigurationFingerprint: sha256:<64 hex digits> of the served configuration
//	ANVIL_METRICS_URL                Target.MetricsURL: the server's Prometheus metrics, an http(s) URL, or off
//	ANVIL_METRICS_INTERVAL           Target.MetricsInterval: the time between samples of them, such as 5s
//	ANVIL_OUT                        the directory the artifacts are written to without -artifacts
//	ANVIL_WARMUP                     Workload.Warmup: a request count, a duration such as 30s, or steady
//	ANVIL_TIMEOUT                    Workload.Timeout: each request's limit, a positive duration such as 90s
//	ANVIL_PROMPT_SIZING              Workload.PromptSizing: reference or exact
//	ANVIL_RATE                       Workload.Rate: an open loop of that many requests per second
//	ANVIL_ARRIVAL                    Workload.Arrival: constant, poisson or gamma
//	ANVIL_BURSTINESS                 Workload.Burstiness: the gamma shape
//	ANVIL_PROBE_RATE                 Workload.ProbeRate: probe requests per second beside the load, 0.001 to 10
//	ANVIL_SLO_TTFT                   SLO.TTFT: a duration such as 500ms
//	ANVIL_SLO_TPOT                   SLO.TPOT: a duration such as 50ms
//	ANVIL_SLO_E2E                    SLO.E2E: a duration such as 10s
//	ANVIL_SLO_ATTAINMENT             SLO.Attainment: the share of requests that must meet it, in (0, 1]
//	ANVIL_SHARD                      Workload.Shard: i/N, this process is shard i (0-based) of N
//	ANVIL_SHARDS                     Workload.Shard: N, with i from JOB_COMPLETION_INDEX (a Kubernetes Indexed Job's pods)
//	ANVIL_START_AT                   Workload.Shard.StartAt: the shards' common start, RFC 3339
//	ANVIL_TRACE                      the path of a trace file to replay instead of the synthetic plan
//	ANVIL_TRACE_FORMAT               mooncake, azure or jsonl, when the file's name does not tell
//	ANVIL_TRACE_SPEEDUP              divides the trace's recorded offsets, in [0.001, 1e6]
//	ANVIL_TRACE_FIRST                keeps the trace's first N rows
//	ANVIL_TRACE_WINDOW               keeps the rows of START..END (or START..) after the first row, such as 10m..20m
//	ANVIL_SESSIONS                   multi-turn sessions: recorded (those of ANVIL_TRACE) or a spec such as turns=3,user=200,output=128,think=2s
//	ANVIL_SESSIONS_COUNT             the number of sessions
//	ANVIL_IGNORE_EOS                 1 sends ignore_eos and min_tokens with a trace's or sessions' requests
//	ANVIL_FAKE_PROFILE               the embedded fake server's profile: fast, plain or reasoning (default)
//	ANVIL_FAKE_TIME_SCALE            the fake server's time scale, in (0, 1000] (default 0.05)
//	ANVIL_FAKE_DECODE_STEP           the fake server's decode step, a duration in (0, 1m]
//	ANVIL_PROGRESS                   0 turns progress off: the live line on a terminal, a heartbeat line every 10 s elsewhere (never splitting a result)
//	ANVIL_HTML                       1 writes report.html beside the artifacts
//
// A shard of a workload run from several machines is capacity.Shard
// (README "Many machines").
//
// One precedence rule holds for every variable: an Option wins over the
// field it sets in the Workload (or Target, or SLO), which wins over the
// environment, which wins over the default; a variable fills only a field
// still at its zero value, and a variable set to the empty string is
// unset. Every variable is parsed at once, before anything starts: a bad
// value fails the benchmark with an error naming the variable, the value
// and what is allowed, whatever else is configured; errors about a field
// of capacity.Target or capacity.Workload say which variable (or
// -benchtime) set it. WithEnvironment reads the variables from elsewhere,
// or (nil) from nowhere.
//
// # Artifacts
//
// Every run writes the anvil-serving.benchmark/v1 JSON artifact and a
// .bench file (benchfmt, identity configuration only: model, engine, gpu,
// protocol, workload, eligible), named after the benchmark and the run's
// start time to the nanosecond, each atomically (a failed write, a full
// disk included, leaves no file). They go to b.ArtifactDir() when go test
// runs with -artifacts (Go 1.26; under -outputdir), else to $ANVIL_OUT,
// else to ./anvil-out in the package directory. The paths are logged with b.Log.
// An interrupted run (Ctrl-C) still writes its partial report, marked not
// performance eligible, and fails the benchmark.
//
// After the run, b.Log names the run's population, the context window and
// where it came from (ANVIL_MAX_MODEL_LEN, /models, /props, /api/ps or
// /api/show, with a disagreeing advertised window), and, when the server
// counted the prompts off their plan by more than a quarter,
// how far and what to do (for reference sizing: ANVIL_PROMPT_SIZING=exact);
// a run none of whose requests succeeded fails with that warning as its
// message.
//
// # Conformance
//
// Conformance runs the streaming conformance suite (package
// anviltest/conformance) against the same target as a test, one subtest per
// check (conformance.Checks), and the package ships TestConformance:
//
//	ANVIL_BASE_URL=http://localhost:8000/v1 go test -run Conformance -v ./anviltest
//
// A check fails for a violation of what OpenAI-compatible streaming clients
// rely on, skips with a reason when the server lacks an optional feature
// (WithRequired makes it mandatory), and logs what it saw. The verdicts are
// also written beside the artifacts, as JSON and a Markdown table.
package anviltest

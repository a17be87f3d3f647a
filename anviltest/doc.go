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
// another, "plain" for a trace replay, whose rows' output lengths leave
// no room for thought, time-scaled by 0.05 unless ANVIL_FAKE_TIME_SCALE
// says), so the
// command works anywhere and prints real
// numbers of a simulated engine.
//
// # Iterations
//
// One benchmark iteration is one measured request: Capacity calls b.Loop
// immediately before each measured request leaves (once it is due and a
// slot is free), on the benchmark goroutine; the model probe and the
// warm-ups come before the first iteration. -benchtime Nx runs exactly N
// requests; a time-based -benchtime (the default 1s included) is the
// length of a closed-loop campaign after which no request is dispatched
// and in-flight ones finish; Workload.Requests, Burst or Duration
// override -benchtime, and a trace, sessions and an open loop's schedule
// fix the campaign's size themselves.
//
// The iteration count go test prints is b.Loop's, which b.Loop needs to
// reach before it may end: it is the number of requests sent only under
// -benchtime Nx with a workload that -benchtime sizes. Elsewhere it is
// not: after a time-based -benchtime it is b.Loop's ramp-up step (it
// checks the time after 1, then up to 100 times as many iterations: 100
// for 30 requests sent); a campaign that sizes itself sends all of its
// requests whatever b.Loop counted (a trace replay printed 100 for 500
// sent, an SLO probe 12 for 100, an open loop 6 for 8); an early stop
// leaves the rest of N unused. go test's ns/op is its elapsed time over
// that count. The .bench file's iteration count is the requests sent and
// its ns/op the run's wall time (drain included) per request sent, and
// the log says "N requests": read those. Use -count 10 for benchstat
// comparisons.
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
//	func BenchmarkOpenLoop(b *testing.B) {
//		anviltest.Capacity(b, capacity.Workload{
//			ContextTokens: 8192, Concurrency: 64, MaxTokens: 1024,
//			Rate: 12, Arrival: "poisson", // or "constant", "gamma" + Burstiness
//		})
//	}
//
//	func BenchmarkKnee(b *testing.B) {
//		anviltest.Sweep(b, capacity.Workload{ContextTokens: 8192, MaxTokens: 1024},
//			capacity.SearchSpec{Kind: "concurrency", Max: 64},
//			anviltest.WithSLO(capacity.SLO{TTFT: 400 * time.Millisecond}))
//	}
//
// The same from the environment, on a Workload without a Rate, and the
// package's example sweep with an E2E bound added to its TTFT one:
//
//	ANVIL_RATE=12 ANVIL_ARRIVAL=gamma ANVIL_BURSTINESS=0.5 go test -bench Capacity -run '^$' ./anviltest
//	ANVIL_SLO_E2E=2s go test -bench SLOSweep -run '^$' ./anviltest
//
// An open loop's requests leave at times drawn from the arrival process,
// computed before the run from the seed, whatever the server is doing; a
// request due at the cap waits, and the wait is recorded. The v1 timing
// rows stay measured from the actual send; anvil_go.requests adds each
// request's scheduled_ms, queue_ms and latencies from the scheduled time
// (free of coordinated omission), anvil_go.arrival the offered and
// achieved rates, and the .bench identity arrival=... rate=..., so an open
// loop never compares with a closed one. Burstiness is vLLM's gamma
// shape: 1 is Poisson, below 1 burstier, above 1 smoother. A request meets
// an SLO when every bound that is set holds for it (DistServe's
// per-request definition, as vLLM's --goodput), a run when at least
// Attainment (default 0.9) of its requests do; open loops are judged on
// the scheduled clock. A search doubles the load until a probe fails,
// then bisects, to the exact integer for concurrency and within 5% for a
// rate, each probe at least ceil(10/(1-Attainment)) requests (100 at 0.9);
// the search's own units are best-conc or best-req/s and probes.
//
// # Metrics
//
// Every benchmark line carries the units of reporters.BenchResult, a stable
// set (medians over successful requests unless named otherwise):
//
//	ns/op              wall time per measured request sent, drain included (the .bench file's; go test's is per b.Loop iteration: see Iterations)
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
//	J/output-tok       the GPUs' energy over the measured phase per output token (runs with ANVIL_GPU_METRICS_URL; capacity/PROTOCOL.md#energy)
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
//	ANVIL_GPU_METRICS_URL            Target.GPUMetricsURLs: the GPUs' NVIDIA DCGM exporters, http(s) URLs, one a node, comma-separated
//	ANVIL_GPUS                       Target.GPUs: the GPUs kept of them, comma-separated indices, UUIDs or label pairs, such as 0,1
//	ANVIL_PRICE_PER_GPU_HOUR         Target.PricePerGPUHour: the price of a GPU for an hour, >= 0: costs per million output tokens
//	ANVIL_PRICE_PER_KWH              Target.PricePerKWh: the price of a kWh, >= 0: the GPUs' electricity per million output tokens
//	ANVIL_OUT                        the directory the artifacts are written to without -artifacts
//	ANVIL_WARMUP                     Workload.Warmup: a request count, a duration such as 30s, or steady
//	ANVIL_MAX_TOKENS                 Workload.MaxTokens: each request's completion limit, 1 to 65536 (unset: 1024)
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
//	ANVIL_FAKE_PROFILE               the embedded fake server's profile: fast, plain or reasoning (default; plain for a trace replay)
//	ANVIL_FAKE_TIME_SCALE            the fake server's time scale, in (0, 1000] (default 0.05)
//	ANVIL_FAKE_DECODE_STEP           the fake server's decode step, a duration in (0, 1m]
//	ANVIL_PROGRESS                   0 turns progress off: the live line on a terminal, a heartbeat line every 10 s elsewhere (never splitting a result)
//	ANVIL_HTML                       1 writes report.html beside the artifacts
//
// A shard of a workload run from several machines is capacity.Shard
// (Many machines below).
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
// or (nil) from nowhere. A variable of the environment that begins with
// ANVIL_ and is none of these fails the run too, naming the closest one,
// and ANVIL_MODEL, ANVIL_ENGINE or ANVIL_GPU without ANVIL_BASE_URL
// fail, so a run of the embedded fake never carries a real engine's name.
// The repository's own tests ignore the variables: go test ./... runs the
// same whatever the shell sets.
//
// Against a real server, the window is asked even when
// ANVIL_MAX_MODEL_LEN declares it (/models, llama.cpp's /props, Ollama's
// /api/ps; a disagreement is logged), GET /models is bounded by 30 s, and
// a base URL without its /v1 is asked "did you mean .../v1". The example
// benchmarks go up to ctx=65536: against a shorter window the prompts are
// cut to fit and the run logs the contexts it planned (select benchmarks
// with -bench, e.g. -bench CapacityConcurrency). ANVIL_PROMPT_SIZING is
// reference (the default: prompts byte-identical to the reference tool's
// at 3.0 characters per token) or exact (prompts the server counts as the
// planned context, its chat template included, learned from its /tokenize
// or a few unmeasured calibration requests, capacity/PROTOCOL.md#exact-token-sizing):
// use exact when the run logs that the prompts are off their plan, as
// against llama.cpp with a tokenizer far from 3.0 characters per token. A
// response whose usage.prompt_tokens is below half the planned context (a
// server that silently truncated the prompt) is a failed request. A run
// whose first 4 requests all fail for a reason that will not change (a
// 4xx such as a prompt over the window) stops there with that reason and
// writes what it ran, not eligible (capacity/PROTOCOL.md#early-stop;
// Workload.KeepGoing sends everything anyway).
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
// also written beside the artifacts, as JSON and a Markdown table. The
// checks, and the verdicts of real engines, are in package
// anviltest/conformance's documentation.
//
// # Traces and sessions
//
// ANVIL_TRACE replaces the synthetic plan of whichever benchmark runs
// with a recorded trace: Mooncake JSONL, Azure LLM inference CSV, or
// anvil's own JSONL for your logs (ANVIL_TRACE_FORMAT=mooncake|azure|jsonl
// when the name does not tell). ANVIL_TRACE_SPEEDUP divides its offsets,
// ANVIL_TRACE_FIRST=N keeps the first N rows and ANVIL_TRACE_WINDOW=10m..20m
// a slice of its time. Each row is sent at its offset with its recorded
// prompt length (the trace's shared blocks byte for byte, so the server's
// prefix cache sees the trace's real reuse) and max_tokens its output
// length; the benchmark's Concurrency caps the requests in flight. Against
// the embedded fake (its plain profile: a trace's output lengths leave a
// reasoning model no room to answer), with the shipped head of the
// Mooncake conversation trace, from the anviltest folder:
//
//	ANVIL_TRACE=../testdata/traces/mooncake-conversation_trace-first500.jsonl \
//	ANVIL_TRACE_SPEEDUP=10 ANVIL_FAKE_PROFILE=plain ANVIL_FAKE_TIME_SCALE=0.01 ANVIL_HTML=1 \
//	  go test -bench 'CapacityConcurrency/ctx=32768/conc=16' -run '^$' .
//
// ANVIL_SESSIONS runs multi-turn conversations instead: turn k+1 carries
// every earlier user message and the answer the server actually gave,
// after the think time; Concurrency is the number of users,
// ANVIL_SESSIONS_COUNT the number of sessions (one per user when unset),
// and ANVIL_SESSIONS=recorded runs the sessions of an ANVIL_TRACE file in
// anvil's JSONL (its session and turn keys). ANVIL_IGNORE_EOS=1 sends
// ignore_eos and min_tokens with every request of a trace or of sessions,
// so a vLLM or SGLang model produces its recorded output length:
//
//	ANVIL_SESSIONS=turns=3,user=200,output=128,think=2s ANVIL_SESSIONS_COUNT=8 \
//	ANVIL_FAKE_PROFILE=plain go test -bench 'CapacityConcurrency/ctx=32768/conc=4' -run '^$' .
//
// The artifact's anvil_go.workload names the trace (file, format, SHA-256
// of its bytes, rows, speed-up, window) or the spec, with a replay's send
// lag against the trace (a lag far above TTFT says the in-flight cap, not
// the trace, set the pace); every request records its trace line or
// session turn. Two replays of different traces or options never compare,
// and the .bench workload carries trace=<file> or sessions=<spec>. From
// Go, WithTraffic takes the same as values (packages capacity/trace,
// capacity/session and capacity/traffic); the rules are in
// capacity/PROTOCOL.md#trace-replay.
//
// # Why it got slow
//
// Before the measured phase every run looks for the server's Prometheus
// endpoint (/metrics at the base URL's root; ANVIL_METRICS_URL names
// another, off disables it; a server without one is silently left out)
// and samples it every ANVIL_METRICS_INTERVAL (default 1s) on a connection
// of its own, never inside a request's time. It keeps vLLM's, SGLang's,
// llama.cpp's and TGI's curated series (running and waiting requests,
// KV-cache use, preemptions, token counters, TTFT and E2E histograms) in
// anvil_go.server_metrics, and cross-checks the server's generation-token
// counter against the run's usage (another client on the server is named)
// and the server's mean TTFT against the client's (the difference is the
// network and the client).
//
// Every run also audits the client itself (anvil_go.audit): scheduler
// latency, timer wake-up lag and the intermittent stalls of its own work,
// GC pauses, CPU share, send lag and connection-pool waits, weighed by a
// documented rule (capacity/PROTOCOL.md#audit) against the run's own
// timings into ok, or suspect with the reasons and what to do (a quieter
// machine, fewer packages tested at once, GOMAXPROCS). A suspect run says
// so in the log, the summary and the HTML header, and its .bench file has
// a note line after its result, which keeps it in its benchstat table.
// Neither the sampler nor the audit ever fails a run; an explicit
// ANVIL_METRICS_URL that does not answer stops it before anything is
// measured.
//
// # TLS and HTTP/2-only endpoints
//
// A self-signed certificate (or one of a private CA): the default client
// trusts the machine's CAs, so every request fails with a tls error that
// says so. Point SSL_CERT_FILE at a PEM file holding the CA (Go reads it on
// Linux and the BSDs):
//
//	SSL_CERT_FILE=$PWD/gpu-box-ca.pem ANVIL_BASE_URL=https://gpu-box:8443/v1 go test -bench Capacity -run '^$' ./anviltest
//
// or give capacity.Target.HTTPClient (through WithTarget) a client that
// trusts it:
//
//	pool := x509.NewCertPool()
//	pool.AppendCertsFromPEM(caPEM)
//	t.HTTPClient = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
//
// An endpoint that speaks only HTTP/2 without TLS (h2c with prior
// knowledge, as some gateways do) resets or answers with an HTTP/2 frame
// every HTTP/1.1 request, so requests fail as connection_reset, eof or
// network, their message saying an HTTP/1.1 response was expected. Give
// the run a client that speaks unencrypted HTTP/2:
//
//	p := new(http.Protocols)
//	p.SetUnencryptedHTTP2(true) // and nothing else: HTTP/2 from the first byte
//	t.HTTPClient = &http.Client{Transport: &http.Transport{Protocols: p}}
//
// Over https, HTTP/2 is negotiated by the TLS handshake with the default
// client. Target.Headers refuses Host, Content-Length, Transfer-Encoding
// and Trailer (the HTTP client writes them from the request); to reach a
// virtual host at another address, give Target.HTTPClient a transport
// whose DialContext connects there.
//
// # Comparing runs
//
// Main prints the run's identity before the first benchmark as benchfmt
// configuration (model when known before the run, engine, gpu, target:
// the base URL without credentials or embedded-fake, the fake's
// fake-profile and fake-time-scale, the build), so runs of different
// setups never share a benchstat row. The .bench files carry only
// identity as configuration (model, engine, gpu, protocol, workload,
// eligible: false when a request failed), so runs of different workloads,
// and partial runs, never mix with complete ones (-ignore eligible
// compares them anyway). To compare two engines on one workload, ignore
// the engine key or make it the column:
//
//	benchstat -ignore engine vllm.bench sglang.bench
//	cat vllm.bench sglang.bench > all.bench && benchstat -col engine all.bench
//
// anvilreport bench converts artifacts of every generation, the reference
// tool's included; a converted anvil-go artifact keeps the name go test
// printed for its run (anvil_go.run.benchmark), and every value is written
// with the digits go test prints, so the same runs compare equal. The two
// formats carry different extra keys; to put both in one table, ignore
// those:
//
//	benchstat -ignore goos,goarch,pkg,cpu,target,fake-profile,fake-time-scale,protocol,workload,eligible old.txt new.txt
//
// # Many machines
//
// A workload run from N load generators, each a shard (capacity.Shard):
//
//	ANVIL_SHARD=i/N        this process is shard i (0-based) of N
//	ANVIL_SHARDS=N         the same, with i from JOB_COMPLETION_INDEX (a Kubernetes Indexed Job's pods)
//	ANVIL_START_AT         the common start, RFC 3339: each shard prepares (warm-up,
//	                       connections), waits for it, saying at once that it waits and
//	                       until when, and starts its measured phase there
//	ANVIL_CLOCK_DOMAIN_ID  the name of the wall clock the machines share; the merge
//	                       refuses shards without one, or with different ones
//
// Shard i measures the requests whose index is i mod N. In an open loop
// each is due at its global offset from the common start and every shard
// keeps the whole in-flight cap (anvil_go.shards.in_flight says how many
// were in flight across the shards); a closed loop's workers are split as
// evenly as possible. N must be at most the workload's Requests and, in a
// closed loop, its Concurrency. A shard ready after the start fails, saying how late, and
// writes its artifact. One ANVIL_START_AT starts one benchmark's measured
// phase: a command whose -test.bench matches several sub-benchmarks runs
// them one after another, and every one after the first finds the start
// passed; run each as a command of its own (-test.bench
// '^BenchmarkCapacity$/^ctx=32768/conc=16$'), each with its own start.
// Every shard runs the same benchmark with the same flags and variables
// but its index; anvilreport merge makes one artifact of their artifacts
// (capacity/PROTOCOL.md#merging-shards), and the README shows the recipe
// for processes on one host. What to put in ANVIL_CLOCK_DOMAIN_ID, the
// Kubernetes recipe, and what was tested are in anviltest/kubernetes's
// README.md.
package anviltest

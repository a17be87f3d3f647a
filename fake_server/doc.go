// Package fakeserver is a simulated OpenAI-compatible LLM serving engine for
// tests and for benchmarks that need a target: it streams chat completions
// over Server-Sent Events the way vLLM, SGLang or ollama do, serves the
// OpenAI Responses API, Anthropic Messages, legacy completions and
// embeddings over the same engine, and it knows the ground truth of what it
// sent.
//
// It is a simulation, not a sleep loop. A tokenizer approximation counts
// prompt tokens: by default ("bpe") as a byte-pair-encoding tokenizer does
// in shape, words, digits, punctuation and whitespace at different costs,
// so no ratio learned on one kind of text predicts another (the seed
// artifact's filler counts about as its model counted it, 3.16 characters
// per token for a 65,536-token plan, not the 3.0 a client may assume);
// Config.Tokenizer "chars" counts at a fixed ratio. One engine goroutine runs batch steps: running
// sequences prefill their uncached prompt tokens at PrefillTokensPerSecond
// (chunked by MaxBatchTokens) or decode; a decode step lasts longer the more
// sequences decode, so aggregate throughput rises with concurrency while each
// stream slows; at most MaxSeqs run and the rest queue. A prefix cache hashes
// prompt blocks, keeps them in an LRU bounded in tokens and reports hits as
// usage.prompt_tokens_details.cached_tokens. Each decode step accepts
// several tokens (speculative decoding), sent as one chunk, or chunks carry
// exactly Config.TokensPerChunk tokens; Config.StallEvery lengthens every
// N-th gap between chunks by Config.StallFor, so inter-token latencies and
// stalls a client measures can be checked against the Trace's per-chunk
// write offsets and token counts. Reasoning tokens precede the answer.
// Every draw comes from a generator seeded with (Config.Seed, request
// index), or (Config.Seed, prompt hash) for a request at temperature 0 so
// identical prompts get identical text unless Config.Nondeterministic; a
// run is deterministic. Slots builds a llama.cpp-like server of n
// independent slots whose time to first token is known exactly for every
// queue position.
//
// The fake follows the benchmark's instructions as a good model does,
// recognised anywhere in the prompt's user text: the last match of
// `ANVIL_REQ_(\d+)_(\d{5})` is the request's canary marker, and the answer
// begins with it; "exactly N" (the last match of
// `(?i)\bexactly\s+(\d{1,6})\b`, N >= 1) in a prompt that also contains the
// word "code" (`(?i)\bcode\b`) asks for exactly N lowercase words "code",
// and the answer is then the marker (if any) followed by N times " code",
// nothing else. Faults (Fault, FaultPlan, the X-Fake-Fault header) make
// it misbehave per request:
// HTTP errors, drops, stalls, malformed or oversized events, endless
// streams, decoding past max_tokens, inconsistent usage totals,
// reasoning-only answers, disobedience. Dialect selects the wire details
// that differ between engines: where usage, role and finish_reason go (or
// none), reasoning as a field or as <think> text, gzip, HTML error pages
// for bad requests, silent prompt truncation, which endpoints report the
// context length.
//
// A Server is started and closed like an httptest.Server. Server.Client
// reaches it in memory over net.Pipe, so a Server created inside a
// testing/synctest bubble with NewInMemory runs on the bubble's fake clock:
// client timing can be asserted exactly, in no wall time:
//
//	synctest.Test(t, func(t *testing.T) {
//		srv := fakeserver.NewInMemory(fakeserver.Fast())
//		defer srv.Close()
//		resp, err := srv.Client().Post(srv.URL+"/v1/chat/completions", ...)
//		...
//		synctest.Wait() // the handler has recorded its trace
//		tr, _ := srv.Trace(0)
//	})
//
// A Server created with New also listens on a loopback socket (URL), for
// plain clients and real-clock benchmarks; a listener's goroutine blocked
// in Accept is not durably blocked, so inside a bubble use NewInMemory (or
// NewUnstarted + StartInMemory), which opens no socket.
//
// Endpoints:
//
//	GET  /v1/models            {"object":"list","data":[{"id":..., "max_model_len":...}]}
//	                           (no max_model_len with Dialect.OmitModelLen)
//	POST /v1/chat/completions  streamed (SSE) or not; OpenAI-style errors:
//	                           404 model_not_found, 400 context_length_exceeded
//	                           ("This model's maximum context length is N tokens.
//	                           However, you requested M tokens ..."), 400 bad body;
//	                           500 and an HTML page instead with Dialect.HTMLErrors
//	POST /v1/responses         OpenAI Responses: input (a string or message
//	                           items), instructions (a system message),
//	                           max_output_tokens, reasoning.effort ("none":
//	                           no reasoning), stream; events laid out as
//	                           Dialect.Layout says; stream_error is
//	                           response.failed
//	POST /v1/messages          Anthropic Messages: messages, system, max_tokens
//	                           (required), thinking ({"type":"disabled"}: no
//	                           reasoning), stream; Anthropic-shaped errors;
//	                           keep-alives are ping events
//	POST /v1/completions       legacy completions: prompt (one), max_tokens
//	                           (default 16), stream_options.include_usage;
//	                           no chat template and no reasoning
//	POST /v1/embeddings        input (a string, strings or token ids),
//	                           encoding_format (float or base64), dimensions;
//	                           unit vectors drawn from each input's text
//	                           (Config.EmbeddingDimension values), answered
//	                           when the engine has prefilled every input
//	                           (each counted as /tokenize counts its text)
//	POST /tokenize             {"prompt"} or {"messages"} (vLLM): answers
//	                           {"count","max_model_len","tokens"}, messages
//	                           counted as usage.prompt_tokens counts them;
//	                           {"content"} (llama.cpp): answers {"tokens"};
//	                           also /v1/tokenize; 404 with Dialect.OmitTokenize
//	GET  /props                llama.cpp: {"default_generation_settings":{"n_ctx":N},...}
//	                           (Dialect.ServeProps; 404 otherwise)
//	GET  /api/ps               ollama: {"models":[{"name","model","context_length":N,...}]}
//	                           (Dialect.ServeOllamaPS; 404 otherwise)
//	POST /api/show             ollama: {"model_info":{"fake.context_length":N},...}
//	                           (Dialect.ServeOllamaShow; 404 otherwise)
//	GET  /fake/trace           every Trace as JSON; ?index=N or ?request_id=ID
//	GET  /metrics              Prometheus text in vLLM V1's names, from the
//	                           engine's own bookkeeping (running, waiting,
//	                           KV use, token counters, TTFT and E2E histograms;
//	                           vllm:spec_decode_* with Config.SpecDraftTokens)
//	GET  /dcgm-exporter/metrics  NVIDIA's DCGM exporter's text for Config.GPUs
//	                           simulated GPUs: power, energy counter, utilization,
//	                           memory, clocks (404 without GPUs; gpu_metrics.go)
//
// Chat request fields read: model, messages (string or text-part content),
// stream, stream_options.include_usage, max_tokens, max_completion_tokens
// (wins), ignore_eos, temperature (0: text drawn from the prompt),
// chat_template_kwargs.enable_thinking (false: no reasoning),
// reasoning_effort ("none": no reasoning). Request headers: X-Fake-Fault
// picks a fault, X-Request-Id is recorded and echoed, Accept-Encoding
// decides Dialect.Gzip "if-accepted". Config.IdleTimeout closes idle
// keep-alive connections.
//
// Every API runs on the one engine: a prompt sent over chat, Responses or
// Messages is the same prompt (the same tokens, the same prefix-cache
// blocks) and gets the same answer at the same times; only the framing
// around the tokens differs. The faults apply to every API where they make
// sense (see Fault).
//
// Server.Trace returns what the server scheduled and wrote for each request,
// as durations since the request arrived (monotonic readings do not compare
// across processes); the binary serves the same at GET /fake/trace. A
// trace is final once Trace.Done: after synctest.Wait in a bubble, or after
// Close.
package fakeserver

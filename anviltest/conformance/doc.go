// Package conformance is a streaming conformance suite for OpenAI-compatible
// chat-completion endpoints: a dozen checks of what streaming clients (and
// the capacity engine) rely on, each giving a Verdict (pass, fail or skip
// with a reason and what it saw), and the verdict files of a run (Report).
//
// A Suite is built once per target and runs one check at a time:
//
//	s, err := conformance.New(ctx, conformance.Config{Target: t})
//	rep := s.NewReport(time.Now())
//	for _, name := range conformance.Checks() {
//		rep.Verdicts = append(rep.Verdicts, s.Check(ctx, name))
//	}
//
// anviltest.Conformance runs it as a Go test, one subtest per check. The
// suite reads the stream with the engine's framer (package capacity/sse),
// finds the model, its context window and llama.cpp's slots with
// capacity.Discover (what capacity.Run reads, through the suite's
// client), and removes the
// target's credentials (capacity's Target.Redactor) from every text it
// returns before anything is cut.
//
// # Checks
//
// Each check FAILs for a violation, SKIPs with a reason when the server
// lacks an optional feature (anviltest.WithRequired makes it mandatory),
// and logs what it saw:
//
//	models                GET /models lists the model, and the server advertises its context
//	                      window where the benchmarks look for it: the /models entry
//	                      (max_model_len, ..., llama.cpp's meta.n_ctx), llama.cpp's /props,
//	                      Ollama's /api/ps and /api/show (SKIP when none does)
//	stream_framing        text/event-stream, uncompressed when asked, JSON data: events,
//	                      terminal data: [DONE], nothing after
//	usage                 stream_options.include_usage brings prompt_tokens, completion_tokens
//	                      and their sum as total_tokens
//	max_tokens            max_tokens and max_completion_tokens cut the answer, finish_reason length
//	finish_reason         the last choice chunk carries stop, length, tool_calls, content_filter
//	                      or function_call
//	content               a short question gets visible delta.content
//	reasoning_separation  reasoning arrives in reasoning_content/reasoning, never as <think>
//	                      in content (SKIP: no reasoning)
//	prompt_tokens         usage.prompt_tokens equals the server's own positive count (POST
//	                      /tokenize with messages for vLLM and SGLang; llama.cpp's
//	                      /apply-template, then /tokenize), and a prompt longer than the
//	                      window is refused, not truncated
//	prefix_cache          a repeated prefix reports prompt_tokens_details.cached_tokens
//	                      (SKIP: never reported)
//	bad_request           invalid JSON, an unknown model, malformed messages: a prompt 4xx
//	                      with an OpenAI {"error": {...}} body
//	isolation             concurrent requests with canary markers never see another
//	                      request's marker (SKIP: the model ignores markers)
//	determinism           temperature 0 twice gives the same output (SKIP with the first
//	                      difference: many engines are not)
//	metrics               the server's Prometheus endpoint parses as the text format; names
//	                      the engine whose series it has and the curated ones it lacks
//	                      (SKIP: no endpoint)
//
// A base URL that is not the API root (GET /models a 404 while the same
// server lists its models at /v1/models, capacity's "did you mean
// .../v1") fails models with the URL given and the URL meant, and skips
// every other check with that reason, sending nothing.
//
// The suite sends a few dozen requests, each with a timeout and a small
// max_tokens, and one prompt longer than the context window, which it
// finds as the benchmarks do (a declared window that disagrees with the
// advertised one is named, and prompts are judged at the window the
// server serves). Every text it prints or writes is scrubbed of the
// target's credentials before anything is cut.
//
// Its verdicts on real engines are pinned by tests against their captured
// answers (testdata): llama.cpp passes models and prompt_tokens and fails
// bad_request (HTTP 500 for invalid JSON, a stream for an unknown model);
// Ollama passes models (its window from /api/ps) and fails prompt_tokens
// (it truncates a prompt over its window). CI runs it against
// @dwmkerr/mock-llm from npm (.ci/mock-llm.sh), which fails usage,
// max_tokens and bad_request.
package conformance

package servermetrics

import (
	"bytes"
	"strings"
)

// engineName names the serving engine whose metric names an endpoint has, as
// recorded in anvil_go.server_metrics.engine.
type engineName string

// The engines whose metrics are curated, each recognised by the prefix of
// its family names.
const (
	engineVLLM     engineName = "vllm"     // prefix "vllm:"
	engineSGLang   engineName = "sglang"   // prefix "sglang:"
	engineLlamaCpp engineName = "llamacpp" // prefix "llamacpp:" (llama-server --metrics)
	engineTGI      engineName = "tgi"      // prefix "tgi_"
)

// engineSpec is what the sampler knows of one engine's names.
type engineSpec struct {
	engine engineName
	prefix string
	// curated are the family names kept, as the text format exposes them
	// (counters with their _total suffix; a histogram by its family name,
	// kept as its _sum and _count).
	curated []string
	// generationTokens is the counter of generated tokens; ttft the
	// histogram of the server's own time to first token, in seconds; empty
	// when the engine has none.
	generationTokens string
	ttft             string
	// promptTimings says the engine reports each response's own prompt
	// time (llama.cpp's timings.prompt_ms, recorded as
	// anvil_go.requests[].server_timings): the TTFT cross-check of an
	// engine without a TTFT histogram.
	promptTimings bool
}

// engines is the curated set, in the order engines are recognised.
//
// vLLM: V1 names (every family labelled engine="N"), with the V0 names a
// V0 server still has: vllm:gpu_cache_usage_perc (deprecated in V1 for
// vllm:kv_cache_usage_perc, which V1 also serves) and
// vllm:gpu_prefix_cache_hit_rate (V0's hit rate; V1 counts
// prefix_cache_queries and prefix_cache_hits in tokens). SGLang: the
// running and queued requests, token_usage (the KV pool's used share) and
// cache_hit_rate. llama.cpp (as b10573 serves it with --metrics): the
// slots processing and the requests deferred for want of one, the token
// counters and the server's own seconds of prompt processing and of
// generation, its llama_decode calls and the slots busy in each; it has
// no KV-cache gauge. TGI: the queue and the current batch.
//
// A family is added by naming it in its engine's curated list; a new
// engine (or exporter) by an entry of its own, recognised by its prefix.
var engines = []engineSpec{
	{engine: engineVLLM, prefix: "vllm:", curated: []string{
		"vllm:num_requests_running",
		"vllm:num_requests_waiting",
		"vllm:kv_cache_usage_perc",
		"vllm:gpu_cache_usage_perc",
		"vllm:num_preemptions_total",
		"vllm:prompt_tokens_total",
		"vllm:generation_tokens_total",
		"vllm:time_to_first_token_seconds",
		"vllm:e2e_request_latency_seconds",
		"vllm:prefix_cache_queries_total",
		"vllm:prefix_cache_hits_total",
		"vllm:gpu_prefix_cache_hit_rate",
	}, generationTokens: "vllm:generation_tokens_total", ttft: "vllm:time_to_first_token_seconds"},
	{engine: engineSGLang, prefix: "sglang:", curated: []string{
		"sglang:num_running_reqs",
		"sglang:num_queue_reqs",
		"sglang:token_usage",
		"sglang:cache_hit_rate",
		"sglang:prompt_tokens_total",
		"sglang:generation_tokens_total",
		"sglang:time_to_first_token_seconds",
		"sglang:e2e_request_latency_seconds",
	}, generationTokens: "sglang:generation_tokens_total", ttft: "sglang:time_to_first_token_seconds"},
	{engine: engineLlamaCpp, prefix: "llamacpp:", curated: []string{
		"llamacpp:requests_processing",
		"llamacpp:requests_deferred",
		"llamacpp:prompt_tokens_total",
		"llamacpp:prompt_tokens_cached_total",
		"llamacpp:prompt_seconds_total",
		"llamacpp:tokens_predicted_total",
		"llamacpp:tokens_predicted_seconds_total",
		"llamacpp:n_decode_total",
		"llamacpp:n_busy_slots_per_decode",
	}, generationTokens: "llamacpp:tokens_predicted_total", promptTimings: true},
	{engine: engineTGI, prefix: "tgi_", curated: []string{
		"tgi_queue_size",
		"tgi_batch_current_size",
	}},
}

// specOf returns the spec of engine e, or nil.
func specOf(e engineName) *engineSpec {
	for i := range engines {
		if engines[i].engine == e {
			return &engines[i]
		}
	}
	return nil
}

// engineIndex returns the index in engines of the engine whose prefix
// name has, or -1.
func engineIndex(name []byte) int {
	for i, s := range engines {
		if bytes.HasPrefix(name, []byte(s.prefix)) {
			return i
		}
	}
	return -1
}

// createdSuffix ends the families prometheus_client adds beside each
// counter and histogram, holding its creation time: not a metric.
const createdSuffix = "_created"

// selection is the set of family names a sampler keeps: every engine's
// curated set plus the names a user gave.
type selection map[string]bool

// newSelection returns the curated names plus extra.
func newSelection(extra []string) selection {
	sel := selection{}
	for _, s := range engines {
		for _, n := range s.curated {
			sel[n] = true
		}
	}
	for _, n := range extra {
		sel[n] = true
	}
	return sel
}

// keeps reports whether the family name is kept: selected, and not a
// *_created family.
func (s selection) keeps(name string) bool {
	return s[name] && !strings.HasSuffix(name, createdSuffix)
}

// keepsBytes is keeps on a name in bytes, without allocating.
func (s selection) keepsBytes(name []byte) bool {
	return s[string(name)] && !bytes.HasSuffix(name, []byte(createdSuffix))
}

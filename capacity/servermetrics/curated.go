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
	// engineDCGM is NVIDIA's DCGM exporter (github.com/NVIDIA/dcgm-exporter):
	// not an engine but the GPUs under one, sampled from a metrics URL of
	// its own (capacity.Target.GPUMetricsURLs).
	engineDCGM engineName = "dcgm" // prefix "DCGM_FI_"
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
	// optional are families kept too, which only some servers have
	// (speculative decoding's, served only with a draft model): Probe
	// never reports them missing.
	optional []string
	// labels, when set, are the only labels its series keep.
	labels []string
	// spec names the engine's speculative-decoding metrics (specdecode.go).
	spec specNames
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
	}, optional: []string{
		"vllm:spec_decode_num_drafts_total",
		"vllm:spec_decode_num_draft_tokens_total",
		"vllm:spec_decode_num_accepted_tokens_total",
		"vllm:spec_decode_num_accepted_tokens_per_pos_total",
	}, generationTokens: "vllm:generation_tokens_total", ttft: "vllm:time_to_first_token_seconds",
		spec: specNames{drafts: "vllm:spec_decode_num_drafts_total", draftTokens: "vllm:spec_decode_num_draft_tokens_total",
			accepted: "vllm:spec_decode_num_accepted_tokens_total", perPos: "vllm:spec_decode_num_accepted_tokens_per_pos_total"}},
	{engine: engineSGLang, prefix: "sglang:", curated: []string{
		"sglang:num_running_reqs",
		"sglang:num_queue_reqs",
		"sglang:token_usage",
		"sglang:cache_hit_rate",
		"sglang:prompt_tokens_total",
		"sglang:generation_tokens_total",
		"sglang:time_to_first_token_seconds",
		"sglang:e2e_request_latency_seconds",
	}, optional: []string{
		"sglang:spec_accept_rate",
		"sglang:spec_accept_length",
		"sglang:spec_verify_calls_total",
	}, generationTokens: "sglang:generation_tokens_total", ttft: "sglang:time_to_first_token_seconds",
		spec: specNames{acceptRate: "sglang:spec_accept_rate", acceptLength: "sglang:spec_accept_length", verifyCalls: "sglang:spec_verify_calls_total"}},
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
	}, optional: []string{
		"llamacpp:spec_decode_num_drafts_total",
		"llamacpp:spec_decode_num_draft_tokens_total",
		"llamacpp:spec_decode_num_accepted_tokens_total",
	}, generationTokens: "llamacpp:tokens_predicted_total", promptTimings: true,
		spec: specNames{drafts: "llamacpp:spec_decode_num_drafts_total", draftTokens: "llamacpp:spec_decode_num_draft_tokens_total",
			accepted: "llamacpp:spec_decode_num_accepted_tokens_total"}},
	{engine: engineTGI, prefix: "tgi_", curated: []string{
		"tgi_queue_size",
		"tgi_batch_current_size",
	}},
	{engine: engineDCGM, prefix: "DCGM_FI_", curated: dcgmFamilies, labels: dcgmLabels},
}

// dcgmFamilies are the DCGM exporter's families kept of a GPU endpoint,
// under the names and units of its default counters
// (etc/default-counters.csv) and DCP metrics: power draw (W), the energy
// counter since boot (mJ), utilization (%), framebuffer used and free
// (MiB), SM clock (MHz), temperature (C), and the profiling ratios of the
// graphics engine, the tensor pipe and the memory interface (0..1).
var dcgmFamilies = []string{
	"DCGM_FI_DEV_POWER_USAGE",
	"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
	"DCGM_FI_DEV_GPU_UTIL",
	"DCGM_FI_DEV_FB_USED",
	"DCGM_FI_DEV_FB_FREE",
	"DCGM_FI_DEV_SM_CLOCK",
	"DCGM_FI_DEV_GPU_TEMP",
	"DCGM_FI_PROF_GR_ENGINE_ACTIVE",
	"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
	"DCGM_FI_PROF_DRAM_ACTIVE",
}

// dcgmLabels are the labels a GPU series keeps of the DCGM exporter's (the
// others, such as pci_bus_id, device and the driver version, name the
// same GPU again): its index, its UUID, its model, its host (Hostname, or
// hostname in the exporter's latest releases) and, on Kubernetes, the pod
// using it; a MIG instance's series add GPU_I_ID (the exporter's label of
// one GPU instance; its profile, GPU_I_PROFILE, would be a ninth label),
// so they stay apart from the whole GPU's.
var dcgmLabels = []string{"gpu", "UUID", "modelName", "Hostname", "hostname", "namespace", "pod", "container", "GPU_I_ID"}

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
		for _, n := range s.optional {
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

package servermetrics

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// values returns name{labels} -> value of a scrape, for comparisons.
func values(sc parsed) map[string]float64 {
	out := map[string]float64{}
	for _, s := range sc.Samples {
		out[s.key()] = s.Value
	}
	return out
}

func readCapture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

// TestParseCaptures: the real bodies parse into their engine's curated
// series, labels kept, histograms as _sum and _count, nothing else.
func TestParseCaptures(t *testing.T) {
	const vllmModel = "\x00model_name=/gpfs/scratch/bsc98/bsc098069/llm_benchmarking/models/llama/llama-2-13b"
	const sglModel = "\x00model_name=meta-llama/Llama-3.1-8B-Instruct"
	for _, tc := range []struct {
		file     string
		engine   engineName
		families int
		want     map[string]float64
	}{
		{"llamacpp-b10573-metrics.txt", engineLlamaCpp, 15, map[string]float64{
			"llamacpp:prompt_tokens_total":            75,
			"llamacpp:prompt_tokens_cached_total":     280,
			"llamacpp:prompt_seconds_total":           0.115984,
			"llamacpp:tokens_predicted_total":         35,
			"llamacpp:tokens_predicted_seconds_total": 0.010527,
			"llamacpp:n_decode_total":                 35,
			"llamacpp:n_busy_slots_per_decode":        1,
			"llamacpp:requests_processing":            0,
			"llamacpp:requests_deferred":              0,
			// Speculative decoding's, zero without a draft model.
			"llamacpp:spec_decode_num_drafts_total":          0,
			"llamacpp:spec_decode_num_draft_tokens_total":    0,
			"llamacpp:spec_decode_num_accepted_tokens_total": 0,
		}},
		{"vllm-fork-0.6.3dev-metrics-idle-from-FerranAgulloLopez-vLLMBatchingMemoryGap.txt", engineVLLM, 15, map[string]float64{
			"vllm:num_preemptions_total" + vllmModel:     0,
			"vllm:prompt_tokens_total" + vllmModel:       0,
			"vllm:generation_tokens_total" + vllmModel:   0,
			"vllm:num_requests_running" + vllmModel:      0,
			"vllm:num_requests_waiting" + vllmModel:      0,
			"vllm:gpu_cache_usage_perc" + vllmModel:      0,
			"vllm:gpu_prefix_cache_hit_rate" + vllmModel: -1,
		}},
		{"sglang-unknown-metrics-docs-example-from-sgl-project-sglang.txt", engineSGLang, 12, map[string]float64{
			"sglang:prompt_tokens_total" + sglModel:               8.128902e+06,
			"sglang:generation_tokens_total" + sglModel:           7.557572e+06,
			"sglang:token_usage" + sglModel:                       0.28,
			"sglang:cache_hit_rate" + sglModel:                    0.007507552643049313,
			"sglang:num_running_reqs" + sglModel:                  162,
			"sglang:num_queue_reqs" + sglModel:                    2826,
			"sglang:time_to_first_token_seconds_sum" + sglModel:   2.3518979474117756e+06,
			"sglang:time_to_first_token_seconds_count" + sglModel: 11008,
			"sglang:e2e_request_latency_seconds_sum" + sglModel:   3.116093850019932e+06,
			"sglang:e2e_request_latency_seconds_count" + sglModel: 11228,
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			sc, err := parse(strings.NewReader(string(readCapture(t, tc.file))), nil)
			require.NoError(t, err)
			require.Equal(t, tc.engine, sc.Engine)
			require.Equal(t, tc.families, sc.Families)
			require.Empty(t, cmp.Diff(tc.want, values(sc)))
		})
	}
}

// TestParseVLLMV1Shape: a body shaped like current vLLM V1's (python_*
// and process_* first, engine="0" on every family, *_created families,
// both KV-cache gauges, histograms with buckets) gives the curated series
// with their labels and no *_created family.
func TestParseVLLMV1Shape(t *testing.T) {
	body := `# HELP python_gc_objects_collected_total Objects collected during gc
# TYPE python_gc_objects_collected_total counter
python_gc_objects_collected_total{generation="0"} 12345.0
# HELP python_info Python platform information
# TYPE python_info gauge
python_info{implementation="CPython",major="3",minor="12",patchlevel="3",version="3.12.3"} 1.0
# HELP process_resident_memory_bytes Resident memory size in bytes.
# TYPE process_resident_memory_bytes gauge
process_resident_memory_bytes 1.2e+09
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="Qwen/Qwen3-8B"} 3.0
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="Qwen/Qwen3-8B"} 5.0
# HELP vllm:gpu_cache_usage_perc GPU KV-cache usage. 1 means 100 percent usage.DEPRECATED: Use vllm:kv_cache_usage_perc instead.
# TYPE vllm:gpu_cache_usage_perc gauge
vllm:gpu_cache_usage_perc{engine="0",model_name="Qwen/Qwen3-8B"} 0.25
# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="Qwen/Qwen3-8B"} 0.25
# HELP vllm:generation_tokens_total Number of generation tokens processed.
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0",model_name="Qwen/Qwen3-8B"} 4096.0
# HELP vllm:generation_tokens_created Number of generation tokens processed.
# TYPE vllm:generation_tokens_created gauge
vllm:generation_tokens_created{engine="0",model_name="Qwen/Qwen3-8B"} 1.7640000e+09
# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.1",model_name="Qwen/Qwen3-8B"} 2.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="Qwen/Qwen3-8B"} 4.0
vllm:time_to_first_token_seconds_count{engine="0",model_name="Qwen/Qwen3-8B"} 4.0
vllm:time_to_first_token_seconds_sum{engine="0",model_name="Qwen/Qwen3-8B"} 0.5
# HELP vllm:time_to_first_token_seconds_created Histogram of time to first token in seconds.
# TYPE vllm:time_to_first_token_seconds_created gauge
vllm:time_to_first_token_seconds_created{engine="0",model_name="Qwen/Qwen3-8B"} 1.7640000e+09
`
	sc, err := parse(strings.NewReader(body), []string{"process_resident_memory_bytes", "vllm:generation_tokens_created"})
	require.NoError(t, err)
	require.Equal(t, engineVLLM, sc.Engine)
	require.Equal(t, 9, sc.Families, "the *_created families are not counted")
	l := "\x00engine=0\x00model_name=Qwen/Qwen3-8B"
	require.Empty(t, cmp.Diff(map[string]float64{
		"process_resident_memory_bytes":              1.2e9,
		"vllm:num_requests_running" + l:              3,
		"vllm:num_requests_waiting" + l:              5,
		"vllm:gpu_cache_usage_perc" + l:              0.25,
		"vllm:kv_cache_usage_perc" + l:               0.25,
		"vllm:generation_tokens_total" + l:           4096,
		"vllm:time_to_first_token_seconds_count" + l: 4,
		"vllm:time_to_first_token_seconds_sum" + l:   0.5,
	}, values(sc)), "a *_created family is never kept, even when named")
	for _, s := range sc.Samples {
		switch s.Name {
		case "vllm:generation_tokens_total", "vllm:time_to_first_token_seconds_count", "vllm:time_to_first_token_seconds_sum":
			require.Equal(t, typeCounter, s.Type, s.Name)
		default:
			require.Equal(t, typeGauge, s.Type, s.Name)
		}
	}
}

// TestParseTGI: TGI's unprefixed-by-colon names are recognised.
func TestParseTGI(t *testing.T) {
	body := "# TYPE tgi_queue_size gauge\ntgi_queue_size 7\n# TYPE tgi_batch_current_size gauge\ntgi_batch_current_size 32\n# TYPE tgi_request_count counter\ntgi_request_count 100\n"
	sc, err := parse(strings.NewReader(body), nil)
	require.NoError(t, err)
	require.Equal(t, engineTGI, sc.Engine)
	require.Equal(t, map[string]float64{"tgi_queue_size": 7, "tgi_batch_current_size": 32}, values(sc))
}

// TestParseRefused: a body that is not the text format is an error naming
// the line; an HTML page is one.
func TestParseRefused(t *testing.T) {
	for _, body := range []string{
		"<html><body>Not Found</body></html>\n",
		"# TYPE x counter\nx{a=\"1\" 3\n",
		"# TYPE x counter\nx not-a-number\n",
	} {
		_, err := parse(strings.NewReader(body), nil)
		require.Error(t, err, body)
		require.ErrorContains(t, err, "line")
	}
	sc, err := parse(strings.NewReader(""), nil)
	require.NoError(t, err, "an empty body is a server with no metric yet")
	require.Equal(t, parsed{}, sc)
}

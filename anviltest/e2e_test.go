package anviltest

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/artifact"
)

// setBenchtime sets -test.benchtime for the rest of the test, as
// testing.Benchmark reads it.
func setBenchtime(t *testing.T, v string) {
	t.Helper()
	f := flag.Lookup(benchtimeFlag)
	old := f.Value.String()
	require.NoError(t, flag.Set(benchtimeFlag, v))
	t.Cleanup(func() { flag.Set(benchtimeFlag, old) })
}

// TestCapacityAgainstTheEmbeddedFake runs the real runner against the
// embedded fake server (fast profile) and checks the whole chain: the
// metrics reported, the artifacts written, artifact.Read accepting them and
// Recompute leaving them unchanged.
func TestCapacityAgainstTheEmbeddedFake(t *testing.T) {
	clearEnv(t)
	setBenchtime(t, "8x")
	out := t.TempDir()
	var rep *artifact.Report
	res := testing.Benchmark(func(b *testing.B) {
		rep = Capacity(b, capacity.Workload{ContextTokens: 2048, Concurrency: 4, MaxTokens: 256,
			RequestCanaries: true, ResponseWords: 4, ControlledOutputPolicy: "strict"},
			withFakeProfile("fast"), withOutDir(out))
	})
	require.NotNil(t, rep, "the benchmark failed")
	require.Equal(t, 8, res.N, "-benchtime 8x is 8 measured requests")
	require.Equal(t, 8, rep.Requests)
	require.Zero(t, rep.Failed, "%+v", rep.Failures)
	require.True(t, rep.PerformanceEligible)
	require.Equal(t, "capacity-v4-reasoning", rep.MeasurementProtocol)
	require.Equal(t, 8, rep.Metrics.RequestCanaryPassed)
	require.Equal(t, "anvil-fakeserver-fast", *rep.Engine)

	for _, unit := range []string{"ttft-p50-ms", "ttft-p95-ms", "ttfo-p50-ms",
		"tpot-ms", "decode-tok/s", "prefill-tok/s", "e2e-p50-ms",
		"output-tok/s", "failed-req"} {
		require.Contains(t, res.Extra, unit)
	}
	require.InDelta(t, rep.WallClockMS*1e6/8, res.Extra["ns/op"], 1e-6)
	require.Equal(t, rep.AnvilGo.ChunkTiming.ITLMS.P99, res.Extra["itl-p99-ms"], "measured chunk timing is reported")
	require.Equal(t, *rep.AnvilGo.ChunkTiming.TokensPerChunkMean, res.Extra["tokens/chunk"])

	jsons, _ := filepath.Glob(filepath.Join(out, "*.json"))
	require.Len(t, jsons, 1)
	data, err := os.ReadFile(jsons[0])
	require.NoError(t, err)
	read, err := artifact.Read(bytes.NewReader(data))
	require.NoError(t, err)
	before, err := read.MarshalJSON()
	require.NoError(t, err)
	require.NoError(t, read.Recompute())
	after, err := read.MarshalJSON()
	require.NoError(t, err)
	if diff := cmp.Diff(string(before), string(after)); diff != "" {
		t.Errorf("Recompute changed the artifact (-written +recomputed):\n%s", diff)
	}
	// The file itself, not only the read-back Report, is what Recompute
	// reproduces: compared as JSON values, key by key.
	var onDisk, recomputed map[string]any
	require.NoError(t, json.Unmarshal(data, &onDisk))
	require.NoError(t, json.Unmarshal(after, &recomputed))
	if diff := cmp.Diff(onDisk, recomputed); diff != "" {
		t.Errorf("the written file differs from its recomputed report (-file +recomputed):\n%s", diff)
	}
	checkAppendixA(t, onDisk)
	benches, _ := filepath.Glob(filepath.Join(out, "*.bench"))
	require.Len(t, benches, 1)
}

// Key sets of the v1 artifact (capacity/PROTOCOL.md#artifact-keys), and
// its one extension object.
const (
	appendixATopLevel = `anvil_go base_url clock_domain_id completed concurrency configuration_fingerprint
		context_distribution context_seed context_tokens controlled_output_policy engine failed
		failures finished_at finished_at_unix_ns gpu manifest max_context_tokens max_tokens
		measurement_protocol metric_population metrics model performance_eligible
		prompt_cache_mode request_canaries request_timings requests response_words
		responses_received run_id sampling schema serve_flags shared_prefix_tokens
		source_recipe started_at started_at_unix_ns tier timestamp_precision
		timing_methodology wall_clock_ms`
	appendixAMethodology = `artifact_timestamps clock controlled_output decode distributions
		effective_prefill generation mean_inter_token_latency p99 request_canaries
		time_to_first_output tpot ttft`
	appendixATimingRow = `content_chunks controlled_output decode_tok_s e2e_ms
		effective_prefill_tok_s generation_ms mean_inter_token_latency_ms
		mean_time_per_output_token_ms output_token_source output_tokens
		planned_context_tokens prompt_tokens reasoning_chunks request_canary request_index
		time_to_first_output_ms tpot_ms ttft_ms visible_content_truncated visible_generation_ms`
	appendixAPopulation = `aggregate_throughput_eligible attempted_requests excluded_requests
		failure_policy p99_interpretation p99_interpretation_by_metric
		p99_minimum_recommended_samples p99_samples_by_metric performance_eligible_requests
		successful_requests`
	appendixAServeFlags = `no_thinking reasoning_effort shared_prefix_burst thinking_mode`
)

// requireKeys checks that m has exactly the keys listed in keys.
func requireKeys(t *testing.T, what string, m any, keys string) map[string]any {
	t.Helper()
	obj, ok := m.(map[string]any)
	require.True(t, ok, "%s is a JSON object, not %T", what, m)
	want := strings.Fields(keys)
	slices.Sort(want)
	if diff := cmp.Diff(want, slices.Sorted(maps.Keys(obj))); diff != "" {
		t.Errorf("%s keys (-appendix A +written):\n%s", what, diff)
	}
	return obj
}

// checkAppendixA checks the artifact of TestCapacityAgainstTheEmbeddedFake
// against appendix A: every key present, and the identity and methodology
// filled with what this run was.
func checkAppendixA(t *testing.T, a map[string]any) {
	t.Helper()
	requireKeys(t, "top level", a, appendixATopLevel)
	require.Regexp(t, `^http://127\.0\.0\.1:\d+/v1$`, a["base_url"], "the embedded fake's URL")
	require.Equal(t, "fake-fast", a["model"], "the model probed from /models")
	require.Equal(t, "anvil-fakeserver-fast", a["engine"])
	require.Equal(t, "none", a["gpu"])
	require.Equal(t, map[string]any{"2048": 8.0}, a["context_distribution"])
	require.Greater(t, a["max_context_tokens"], 2048.0, "probed from /models")
	require.Equal(t, artifact.Schema, a["schema"])
	require.Equal(t, "strict", a["controlled_output_policy"])
	require.Equal(t, true, a["request_canaries"])
	require.Equal(t, 4.0, a["response_words"])
	for name, sentence := range requireKeys(t, "timing_methodology", a["timing_methodology"], appendixAMethodology) {
		s, _ := sentence.(string)
		require.Greater(t, len(strings.Fields(s)), 5, "timing_methodology.%s is a sentence: %q", name, s)
	}
	sampling := requireKeys(t, "sampling", a["sampling"], "temperature top_p")
	require.Equal(t, map[string]any{"effective_request": 0.0, "requested": nil, "sent": true},
		requireKeys(t, "sampling.temperature", sampling["temperature"], "effective_request requested sent"),
		"an unset temperature sends 0.0, as the reference does")
	require.Equal(t, map[string]any{"effective_request": nil, "requested": nil, "sent": false},
		requireKeys(t, "sampling.top_p", sampling["top_p"], "effective_request requested sent"),
		"an unset top_p is not sent")
	flags := requireKeys(t, "serve_flags", a["serve_flags"], appendixAServeFlags)
	require.Equal(t, "default", flags["thinking_mode"])
	require.Equal(t, false, flags["no_thinking"])
	pop := requireKeys(t, "metric_population", a["metric_population"], appendixAPopulation)
	require.Equal(t, 8.0, pop["successful_requests"])
	rows, _ := a["request_timings"].([]any)
	require.Len(t, rows, 8)
	for i, row := range rows {
		r := requireKeys(t, fmt.Sprintf("request_timings[%d]", i), row, appendixATimingRow)
		requireKeys(t, fmt.Sprintf("request_timings[%d].request_canary", i), r["request_canary"],
			"capture_complete foreign_marker_count marker marker_at_start observed_marker_count passed")
		requireKeys(t, fmt.Sprintf("request_timings[%d].controlled_output", i), r["controlled_output"],
			"capture_complete exact_adherence observed_code_words observed_extra_words passed policy requested_words")
	}
	for _, k := range []string{"timestamp_precision"} {
		s, _ := a[k].(string)
		require.Greater(t, len(strings.Fields(s)), 5, "%s is a sentence: %q", k, s)
	}
	fp, _ := pop["failure_policy"].(string)
	require.Greater(t, len(strings.Fields(fp)), 5, "failure_policy is a sentence: %q", fp)
}

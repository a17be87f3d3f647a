package capacity

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"
)

// bitsEqual is float64 equality bit for bit: what "reproduces exactly" means.
var bitsEqual = cmp.Comparer(func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) })

func readReport(t testing.TB, path string) (*Report, []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var r Report
	require.NoError(t, r.UnmarshalJSON(data), path)
	return &r, data
}

var seedPath = filepath.Join("..", "testdata", "seed-capacity-v4-reasoning.json")

// TestRecomputeSeedFromZero zeroes every derived field of the golden
// artifact, recomputes, and requires every metric bit-identical to the
// recorded one; prefix_cache_hit_avg is the one value rows cannot give.
func TestRecomputeSeedFromZero(t *testing.T) {
	orig, _ := readReport(t, seedPath)
	r, _ := readReport(t, seedPath)
	r.Metrics = Metrics{}
	r.MetricPopulation = MetricPopulation{}
	r.PerformanceEligible = false
	r.MeasurementProtocol = ""

	require.NoError(t, r.Recompute())

	require.Nil(t, r.Metrics.PrefixCacheHitAvg, "prefix_cache_hit_avg is not derivable and was zeroed")
	opts := cmp.Options{bitsEqual, cmpopts.IgnoreUnexported(Metrics{}, MetricPopulation{}),
		cmpopts.IgnoreFields(Metrics{}, "PrefixCacheHitAvg")}
	if diff := cmp.Diff(orig.Metrics, r.Metrics, opts); diff != "" {
		t.Errorf("recomputed metrics differ from the seed (-seed +recomputed):\n%s", diff)
	}
	if diff := cmp.Diff(orig.MetricPopulation, r.MetricPopulation, opts,
		cmpopts.IgnoreFields(MetricPopulation{}, "FailurePolicy")); diff != "" {
		t.Errorf("metric_population differs (-seed +recomputed):\n%s", diff)
	}
	require.Equal(t, FailurePolicy, r.MetricPopulation.FailurePolicy)
	require.True(t, r.PerformanceEligible)
	require.Equal(t, ProtocolV4Reasoning, r.MeasurementProtocol)

	// Every one of the 159 keys was compared: the current shape written
	// from the recomputed metrics is exactly the seed's key set.
	r.Metrics.PrefixCacheHitAvg = orig.Metrics.PrefixCacheHitAvg
	require.Equal(t, 159, len(metricsTable.fields))
	require.Equal(t, len(metricsTable.fields), orig.Metrics.shape.keyCount())
	require.Empty(t, orig.Metrics.shape.extra, "every seed metric key is produced by the naming rule")
}

// TestRecomputeSeedUnchanged: recomputing the artifact as read changes no
// byte of it.
func TestRecomputeSeedUnchanged(t *testing.T) {
	r, data := readReport(t, seedPath)
	require.NoError(t, r.Recompute())
	out, err := r.MarshalJSON()
	require.NoError(t, err)
	require.Equal(t, string(data), string(out))
}

// TestRecomputeCorpus recomputes every corpus artifact that keeps its rows
// (capacity-v3 and -v4-reasoning, 75 files) and requires every recorded
// metric bit-identical. The one documented difference: generations that
// predate throughput_performance_eligible reported throughput_tok_s for
// runs with failures; the current protocol writes null there.
func TestRecomputeCorpus(t *testing.T) {
	recomputed := 0
	for _, f := range corpusFiles(t) {
		r, _ := readReport(t, f)
		if !r.shape.has("request_timings") {
			require.Error(t, r.Recompute(), "%s has no rows; recompute must refuse", f)
			continue
		}
		recorded := r.Metrics
		recordedPopulationKeys := r.shape.has("metric_population")
		require.NoError(t, r.Recompute(), f)
		recomputed++
		ignore := []string{}
		if len(r.Failures) > 0 && !recorded.shape.has("throughput_performance_eligible") {
			require.Nil(t, r.Metrics.ThroughputTokS, "%s: a run with failures is not throughput eligible", f)
			ignore = append(ignore, "ThroughputTokS")
		}
		opts := cmp.Options{bitsEqual, cmpopts.IgnoreUnexported(Metrics{}), cmpopts.IgnoreFields(Metrics{}, ignore...),
			// keys the artifact does not have are not compared
			cmp.FilterPath(func(p cmp.Path) bool { return !recordedHas(&recorded, p) }, cmp.Ignore())}
		if diff := cmp.Diff(recorded, r.Metrics, opts); diff != "" {
			t.Errorf("%s: recomputed metrics differ (-recorded +recomputed):\n%s", f, diff)
		}
		require.Equal(t, recordedPopulationKeys, r.shape.has("metric_population"))
	}
	require.Equal(t, 75, recomputed)
}

// recordedHas reports whether the metrics key a cmp path leads to is in
// the artifact. Paths are Metrics.<Field> or Metrics.<Family>.<Statistic>.
func recordedHas(m *Metrics, p cmp.Path) bool {
	if len(p) < 2 {
		return true
	}
	sf, ok := p[1].(cmp.StructField)
	if !ok {
		return true
	}
	for _, fam := range Families {
		if fam.Of(&Metrics{}) != nil && familyField[fam.Name] == sf.Name() {
			if len(p) < 3 {
				return true
			}
			stat, ok := p[2].(cmp.StructField)
			if !ok {
				return true
			}
			return m.shape.has(fam.Key(statByField[stat.Name()]))
		}
	}
	key, ok := scalarKeys[sf.Name()]
	return !ok || m.shape.has(key)
}

var familyField = map[string]string{
	"completion_tokens": "CompletionTokens", "prompt_tokens": "PromptTokensDist",
	"decode_tok_s": "DecodeTokS", "effective_prefill_tok_s": "EffectivePrefillTokS",
	"mean_inter_token_latency_ms": "MeanInterTokenLatencyMS", "e2e": "E2E",
	"generation": "Generation", "mean_time_per_output_token": "MeanTimePerOutputToken",
	"time_to_first_output": "TimeToFirstOutput", "tpot": "TPOT", "ttft": "TTFT",
}

var statByField = map[string]Statistic{
	"Samples": StatSamples, "Mean": StatMean, "Stddev": StatStddev, "MeanCI95Low": StatMeanCI95Low,
	"MeanCI95High": StatMeanCI95High, "Min": StatMin, "P25": StatP25, "P50": StatP50, "P75": StatP75,
	"P90": StatP90, "P95": StatP95, "P99": StatP99, "Max": StatMax,
}

var scalarKeys = map[string]string{
	"OutputTokens": "output_tokens", "PromptTokens": "prompt_tokens",
	"PromptTokenSamples": "prompt_token_samples", "ContentChunks": "content_chunks",
	"ReasoningChunks": "reasoning_chunks", "ContentChunksPerSecond": "content_chunks_s",
	"ThroughputTokS": "throughput_tok_s", "ThroughputPerformanceEligible": "throughput_performance_eligible",
	"OutputTokenSources": "output_token_sources", "PrefixCacheHitAvg": "prefix_cache_hit_avg",
	"RequestCanarySamples": "request_canary_samples", "RequestCanaryPassed": "request_canary_passed",
	"ControlledOutputSamples":            "controlled_output_samples",
	"ControlledOutputUnobservable":       "controlled_output_unobservable",
	"ControlledOutputExactAdherence":     "controlled_output_exact_adherence",
	"ControlledOutputExactAdherenceRate": "controlled_output_exact_adherence_rate",
}

package artifact

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"
)

// bitsEqual is float64 equality bit for bit: what "reproduces exactly" means.
var bitsEqual = cmp.Comparer(func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) })

var seedPath = filepath.Join("..", "..", "testdata", "seed-capacity-v4-reasoning.json")

// TestRecomputeSeedFromZero zeroes every derived field of the golden
// artifact, recomputes, and requires every metric bit-identical to the
// recorded one; prefix_cache_hit_avg is the one value rows cannot give.
func TestRecomputeSeedFromZero(t *testing.T) {
	orig, _ := readFile(t, seedPath)
	r, _ := readFile(t, seedPath)
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
	require.Equal(t, failurePolicy, r.MetricPopulation.FailurePolicy)
	require.True(t, r.PerformanceEligible)
	require.Equal(t, protocolV4Reasoning, r.MeasurementProtocol)

	// Every one of the 159 keys was compared: the seed has each key the
	// Metrics fields are written to, and no other.
	require.Len(t, metricsTable.fields, 159)
	for i, f := range metricsTable.fields {
		require.True(t, orig.Metrics.shape.hasField(i), "the seed lacks %s", f.key)
	}
	require.Empty(t, orig.Metrics.shape.extra, "every seed metric key is produced by the naming rule")
}

// TestRecomputeSeedUnchanged: recomputing the artifact as read changes no
// byte of it.
func TestRecomputeSeedUnchanged(t *testing.T) {
	r, data := readFile(t, seedPath)
	require.NoError(t, r.Recompute())
	out, err := r.MarshalJSON()
	require.NoError(t, err)
	require.Equal(t, string(data), string(out))
}

// TestRecomputeCorpus recomputes every corpus artifact that keeps its rows
// (capacity-v3 and -v4-reasoning, 75 files) and requires every recorded
// metric bit-identical: the metrics object written after Recompute, which
// keeps the recorded key set, equals the recorded one literal for literal
// (the shortest float repr is unique, so equal literals are equal bits).
// The one documented difference: generations that predate
// throughput_performance_eligible reported throughput_tok_s for runs with
// failures; the current protocol writes null there.
func TestRecomputeCorpus(t *testing.T) {
	recomputed := 0
	for _, f := range corpusFiles(t) {
		r, data := readFile(t, f)
		if !r.shape.has("request_timings") {
			require.Error(t, r.Recompute(), "%s has no rows; recompute must refuse", f)
			continue
		}
		recorded := generic(t, data).(map[string]any)["metrics"].(map[string]any)
		recordedPopulationKeys := r.shape.has("metric_population")
		require.NoError(t, r.Recompute(), f)
		recomputed++
		out, err := r.MarshalJSON()
		require.NoError(t, err, f)
		got := generic(t, out).(map[string]any)["metrics"].(map[string]any)
		if len(r.Failures) > 0 && !r.Metrics.shape.has("throughput_performance_eligible") {
			require.Nil(t, r.Metrics.ThroughputTokS, "%s: a run with failures is not throughput eligible", f)
			require.Contains(t, recorded, "throughput_tok_s", f)
			require.Nil(t, got["throughput_tok_s"], f)
			delete(recorded, "throughput_tok_s")
			delete(got, "throughput_tok_s")
		}
		if diff := cmp.Diff(recorded, got); diff != "" {
			t.Errorf("%s: recomputed metrics differ (-recorded +recomputed):\n%s", f, diff)
		}
		require.Equal(t, recordedPopulationKeys, r.shape.has("metric_population"))
	}
	require.Equal(t, 75, recomputed)
}

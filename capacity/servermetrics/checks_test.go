package servermetrics

import (
	"testing"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/stretchr/testify/require"
)

// counterSeries is a counter series of one label set with the given
// increase, first sampled at first ms.
func counterSeries(name string, first, inc float64, resets int) artifact.MetricSeries {
	return artifact.MetricSeries{Name: name, Type: typeCounter, Labels: map[string]string{}, SamplesPerPoint: 1,
		OffsetsMS: []float64{first, first + 1000}, Values: []float64{0, inc}, Increase: new(inc), Resets: new(resets)}
}

// TestCheckGenerationTokens: the token rule on synthetic members.
func TestCheckGenerationTokens(t *testing.T) {
	const gen = "vllm:generation_tokens_total"
	for _, tc := range []struct {
		name      string
		series    []artifact.MetricSeries
		facts     runFacts
		verdict   string
		allowance float64
		reason    string
	}{
		{"exact", []artifact.MetricSeries{counterSeries(gen, 2, 5000, 0)},
			runFacts{CompletionTokens: 5000, MaxTokens: 64, DurationMS: 10000}, "exact", 0, ""},
		{"two engine cores summed", []artifact.MetricSeries{counterSeries(gen, 2, 3000, 0), counterSeries(gen, 3, 2000, 0)},
			runFacts{CompletionTokens: 5000, DurationMS: 10000}, "exact", 0, ""},
		{"baseline sampled late explains a shortfall", []artifact.MetricSeries{counterSeries(gen, 100, 4960, 0)},
			runFacts{CompletionTokens: 5000, DurationMS: 10000}, "agree", 50, ""},
		{"a larger shortfall is named", []artifact.MetricSeries{counterSeries(gen, 100, 4000, 0)},
			runFacts{CompletionTokens: 5000, DurationMS: 10000}, "mismatch", 50, "1000 tokens fewer"},
		{"unreported requests explain a surplus", []artifact.MetricSeries{counterSeries(gen, 1, 5100, 0)},
			runFacts{CompletionTokens: 5000, UnreportedRequests: 2, MaxTokens: 64, DurationMS: 10000}, "agree", 128, ""},
		{"another client", []artifact.MetricSeries{counterSeries(gen, 1, 9000, 0)},
			runFacts{CompletionTokens: 5000, UnreportedRequests: 2, MaxTokens: 64, DurationMS: 10000}, "mismatch", 128, "another client was using the server"},
		{"reset", []artifact.MetricSeries{counterSeries(gen, 1, 5000, 1)},
			runFacts{CompletionTokens: 5000, DurationMS: 10000}, "mismatch", 0, "reset 1 times"},
		{"a shard sees every shard's tokens: no mismatch", []artifact.MetricSeries{counterSeries(gen, 1, 15000, 0)},
			runFacts{CompletionTokens: 5000, MaxTokens: 64, DurationMS: 10000, ShardIndex: 1, ShardCount: 3}, "shard", 0,
			"shard 1 of 3: the server's counter counts every shard's tokens, this shard's responses only its own; the merge of all 3 shards checks them together"},
		{"a shard of one is the whole run", []artifact.MetricSeries{counterSeries(gen, 1, 5000, 0)},
			runFacts{CompletionTokens: 5000, DurationMS: 10000, ShardIndex: 0, ShardCount: 1}, "exact", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &artifact.ServerMetrics{Engine: new("vllm"), Series: tc.series}
			c := check(m, tc.facts)
			require.NotNil(t, c)
			require.Nil(t, c.TTFT, "no histogram, no client TTFT")
			g := c.GenerationTokens
			require.NotNil(t, g)
			require.Equal(t, gen, g.Counter)
			require.Equal(t, tc.verdict, g.Verdict)
			require.Equal(t, tc.allowance, g.Allowance)
			require.Equal(t, g.ServerIncrease-float64(g.ClientTokens), g.Difference)
			if tc.reason == "" {
				require.Nil(t, g.Reason)
			} else {
				require.NotNil(t, g.Reason)
				require.Contains(t, *g.Reason, tc.reason)
			}
		})
	}
}

// TestCheckTTFT: the server's mean from the histogram's increases, and the
// part the network and the client add.
func TestCheckTTFT(t *testing.T) {
	const h = "sglang:time_to_first_token_seconds"
	m := &artifact.ServerMetrics{Engine: new("sglang"), Series: []artifact.MetricSeries{
		counterSeries(h+"_sum", 0, 2.5, 0), counterSeries(h+"_count", 0, 20, 0),
	}}
	c := check(m, runFacts{ClientFirstTokenMeanMS: new(128.0)})
	require.NotNil(t, c)
	require.Nil(t, c.GenerationTokens)
	require.Equal(t, &artifact.TTFTCheck{Histogram: h, ServerRequests: 20, ServerMeanMS: 125, ClientMeanMS: 128, NetworkAndClientMS: 3}, c.TTFT)

	require.Nil(t, check(m, runFacts{}), "no client mean, no generation counter: nothing to check")
	require.Nil(t, check(&artifact.ServerMetrics{Engine: new("tgi")}, runFacts{ClientFirstTokenMeanMS: new(1.0)}))
	require.Nil(t, check(&artifact.ServerMetrics{}, runFacts{}), "no engine recognised")
	require.Nil(t, check(nil, runFacts{}))
}

// TestFactsOf: the facts of a report with a usage row, a row without
// usage, a failure that carried usage, one that did not and a request
// never sent.
func TestFactsOf(t *testing.T) {
	r := &artifact.Report{MaxTokens: 64, WallClockMS: 1500,
		RequestTimings: []artifact.TimingRow{
			{OutputTokens: new(40), OutputTokenSource: artifact.SourceUsage, TimeToFirstOutputMS: 100},
			{OutputTokenSource: artifact.SourceContentChunks, TimeToFirstOutputMS: 300},
		},
		Failures: []artifact.Failure{
			{ResponseMetadata: &artifact.ResponseMetadata{Usage: &artifact.Usage{CompletionTokens: new(64)}}},
			{FailureClass: artifact.FailureTimeout},
			{FailureClass: artifact.FailureCancelled},
		},
		AnvilGo: &artifact.Extension{Run: &artifact.RunSummary{SentRequests: 4, NeverSentRequests: 1}},
	}
	require.Equal(t, runFacts{CompletionTokens: 104, UnreportedRequests: 2, MaxTokens: 64, DurationMS: 1500,
		ClientFirstTokenMeanMS: new(200.0)}, factsOf(r))
	r.AnvilGo = nil
	require.Equal(t, 3, factsOf(r).UnreportedRequests, "without anvil_go every row and failure counts as sent")
	require.Nil(t, factsOf(&artifact.Report{}).ClientFirstTokenMeanMS)
}

// TestFactsOfShard: factsOf reads the run's shard.
func TestFactsOfShard(t *testing.T) {
	rep := &artifact.Report{AnvilGo: &artifact.Extension{Shard: &artifact.Shard{Index: 2, Count: 4}}}
	f := factsOf(rep)
	require.Equal(t, 2, f.ShardIndex)
	require.Equal(t, 4, f.ShardCount)
	require.Zero(t, factsOf(&artifact.Report{}).ShardCount, "not a shard")
}

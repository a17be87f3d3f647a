package artifact

import (
	"math"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/stats"
)

// syntheticReport is a run of 4 planned requests: an exact-usage row with a
// canary and exact controlled output, a row without usage (content-chunk
// count, unobservable controlled output), a one-token row (no decode), and
// an HTTP failure.
func syntheticReport() *Report {
	return &Report{
		Schema: Schema, Requests: 4, WallClockMS: 2000, Completed: 3, Failed: 1,
		RequestTimings: []TimingRow{
			{
				RequestIndex: 0, PlannedContextTokens: 32768, PromptTokens: new(100), OutputTokens: new(11),
				OutputTokenSource: SourceUsage, ContentChunks: 8, ReasoningChunks: 3,
				TimeToFirstOutputMS: 10, TTFTMS: 20, E2EMS: 120, GenerationMS: 110, VisibleGenerationMS: 100,
				EffectivePrefillTokS: new(10000.0), DecodeTokS: new(10 / 0.11),
				TPOTMS: new(11.0), MeanTimePerOutputTokenMS: new(11.0), MeanInterTokenLatencyMS: new(11.0),
				RequestCanary:    &CanaryCheck{Marker: "ANVIL_REQ_7_00000", MarkerAtStart: true, ObservedMarkerCount: 1, CaptureComplete: true, Passed: true},
				ControlledOutput: &ControlledOutputCheck{RequestedWords: 10, ObservedCodeWords: 10, CaptureComplete: true, ExactAdherence: new(true), Policy: "observe", Passed: true},
			},
			{
				RequestIndex: 1, PlannedContextTokens: 32768, OutputTokens: new(5),
				OutputTokenSource: SourceContentChunks, ContentChunks: 5,
				TimeToFirstOutputMS: 30, TTFTMS: 30, E2EMS: 90, GenerationMS: 60, VisibleGenerationMS: 60,
				RequestCanary:    &CanaryCheck{Marker: "ANVIL_REQ_7_00001", ObservedMarkerCount: 1, CaptureComplete: true},
				ControlledOutput: &ControlledOutputCheck{RequestedWords: 10, ObservedCodeWords: 9, Policy: "observe", Passed: true},
			},
			{
				RequestIndex: 2, PlannedContextTokens: 65536, PromptTokens: new(200), OutputTokens: new(1),
				OutputTokenSource: SourceUsage, ContentChunks: 1,
				TimeToFirstOutputMS: 40, TTFTMS: 40, E2EMS: 40, EffectivePrefillTokS: new(5000.0),
				RequestCanary:    &CanaryCheck{Marker: "ANVIL_REQ_7_00002", MarkerAtStart: true, ObservedMarkerCount: 1, CaptureComplete: true, Passed: true},
				ControlledOutput: &ControlledOutputCheck{RequestedWords: 10, ObservedCodeWords: 1, CaptureComplete: true, ExactAdherence: new(false), Policy: "observe", Passed: true},
			},
		},
		Failures: []Failure{{
			RequestIndex: 3, PlannedContextTokens: 32768, FailureClass: FailureHTTPError,
			ErrorType: "HTTPStatusError", ErrorMessage: "503 Service Unavailable", ElapsedMS: 4,
			HTTPStatus: new(503), ResponseReceived: true,
		}},
	}
}

func dist(xs ...float64) Distribution {
	d, err := distributionOf(stats.Summarize(xs))
	if err != nil {
		panic(err)
	}
	return d
}

func TestRecomputeSynthetic(t *testing.T) {
	r := syntheticReport()
	r.Metrics.PrefixCacheHitAvg = new(0.25)
	require.NoError(t, r.Recompute())

	want := Metrics{
		CompletionTokens:        dist(11, 5, 1),
		PromptTokensDist:        dist(100, 200),
		DecodeTokS:              dist(10 / 0.11),
		EffectivePrefillTokS:    dist(10000, 5000),
		MeanInterTokenLatencyMS: dist(11),
		E2E:                     dist(120, 90, 40),
		Generation:              dist(110, 60, 0),
		MeanTimePerOutputToken:  dist(11),
		TimeToFirstOutput:       dist(10, 30, 40),
		TPOT:                    dist(11),
		TTFT:                    dist(20, 30, 40),
		OutputTokens:            nil, // a row without usage: tokens are not exact
		PromptTokens:            new(300),
		PromptTokenSamples:      2,
		ContentChunks:           14,
		ReasoningChunks:         3,
		ContentChunksPerSecond:  new(14 / 2.0),
		OutputTokenSources:      map[OutputTokenSource]int{SourceUsage: 2, SourceContentChunks: 1},
		PrefixCacheHitAvg:       new(0.25), // kept
		RequestCanarySamples:    3, RequestCanaryPassed: 2,
		ControlledOutputSamples: 3, ControlledOutputUnobservable: 1, ControlledOutputExactAdherence: 1,
		ControlledOutputExactAdherenceRate: new(0.5),
	}
	if diff := cmp.Diff(want, r.Metrics, bitsEqual, cmpopts.IgnoreUnexported(Metrics{})); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	require.Equal(t, 1, r.Metrics.DecodeTokS.Samples)
	require.Nil(t, r.Metrics.DecodeTokS.Stddev, "one sample has no spread")
	require.Nil(t, r.Metrics.DecodeTokS.MeanCI95Low)

	wantPop := MetricPopulation{
		AttemptedRequests: 4, SuccessfulRequests: 3, PerformanceEligibleRequests: 3, ExcludedRequests: 1,
		FailurePolicy: failurePolicy, P99Interpretation: p99Descriptive, P99MinimumRecommendedSamples: 100,
		P99SamplesByMetric: map[string]int{"decode_tok_s": 1, "e2e": 3, "effective_prefill_tok_s": 2, "tpot": 1, "ttft": 3},
		P99InterpretationByMetric: map[string]string{"decode_tok_s": p99Descriptive, "e2e": p99Descriptive,
			"effective_prefill_tok_s": p99Descriptive, "tpot": p99Descriptive, "ttft": p99Descriptive},
	}
	if diff := cmp.Diff(wantPop, r.MetricPopulation, cmpopts.IgnoreUnexported(MetricPopulation{})); diff != "" {
		t.Errorf("metric_population (-want +got):\n%s", diff)
	}
	require.False(t, r.PerformanceEligible)
	require.Equal(t, protocolV4Reasoning, r.MeasurementProtocol)

	// Recompute is idempotent.
	first, err := r.MarshalJSON()
	require.NoError(t, err)
	require.NoError(t, r.Recompute())
	second, err := r.MarshalJSON()
	require.NoError(t, err)
	require.Equal(t, string(first), string(second))
}

func TestRecomputeNoSuccess(t *testing.T) {
	r := &Report{Schema: Schema, Requests: 2, WallClockMS: 500, Failures: []Failure{
		{RequestIndex: 0, FailureClass: FailureTimeout}, {RequestIndex: 1, FailureClass: FailureCancelled},
	}}
	require.NoError(t, r.Recompute())
	for _, fam := range families {
		d := fam.Of(&r.Metrics)
		require.Equal(t, 0, d.Samples, fam.Name)
		for _, s := range statistics[1:] {
			require.Nil(t, *d.field(s), "%s %s", fam.Name, s)
		}
	}
	require.Equal(t, new(0), r.Metrics.OutputTokens)
	require.Nil(t, r.Metrics.ThroughputTokS)
	require.False(t, r.Metrics.ThroughputPerformanceEligible)
	require.Nil(t, r.Metrics.ContentChunksPerSecond)
	require.Nil(t, r.Metrics.PromptTokens)
	require.Nil(t, r.Metrics.ControlledOutputExactAdherenceRate)
	require.Equal(t, 2, r.MetricPopulation.ExcludedRequests)
	require.Equal(t, protocolV3, r.MeasurementProtocol)
	require.False(t, r.PerformanceEligible)
	_, err := r.MarshalJSON()
	require.NoError(t, err)
}

func TestRecomputeOneRequest(t *testing.T) {
	r := &Report{Schema: Schema, Requests: 1, WallClockMS: 250, RequestTimings: []TimingRow{{
		OutputTokens: new(64), PromptTokens: new(1000), OutputTokenSource: SourceUsage, ContentChunks: 64,
		TimeToFirstOutputMS: 50, TTFTMS: 50, E2EMS: 250, GenerationMS: 200, VisibleGenerationMS: 200,
		EffectivePrefillTokS: new(20000.0), DecodeTokS: new(315.0), TPOTMS: new(200 / 63.0),
		MeanTimePerOutputTokenMS: new(200 / 63.0), MeanInterTokenLatencyMS: new(200 / 63.0),
	}}}
	require.NoError(t, r.Recompute())
	require.True(t, r.PerformanceEligible)
	require.True(t, r.Metrics.ThroughputPerformanceEligible)
	require.Equal(t, 64/0.25, *r.Metrics.ThroughputTokS)
	require.Nil(t, r.Metrics.ContentChunksPerSecond, "tokens are exact")
	require.Equal(t, 1, r.Metrics.TTFT.Samples)
	require.Equal(t, 50.0, *r.Metrics.TTFT.P99)
	require.Nil(t, r.Metrics.TTFT.Stddev)
	require.Equal(t, protocolV3, r.MeasurementProtocol)
}

func TestRecomputeRejects(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Report)
		want   string
	}{
		{"ttft after e2e", func(r *Report) { r.RequestTimings[0].TTFTMS = 500 }, "request_timings[0]: want 0 <= time_to_first_output_ms"},
		{"negative ttfo", func(r *Report) { r.RequestTimings[1].TimeToFirstOutputMS = -1 }, "request_timings[1]"},
		{"nan latency", func(r *Report) { r.RequestTimings[2].E2EMS = math.NaN() }, "e2e_ms is NaN"},
		{"negative chunks", func(r *Report) { r.RequestTimings[0].ContentChunks = -2 }, "content_chunks is -2"},
		{"negative wall", func(r *Report) { r.WallClockMS = -1 }, "wall_clock_ms -1"},
		{"negative requests", func(r *Report) { r.Requests = -3 }, "requests -3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := syntheticReport()
			// Recorded values a recompute would overwrite.
			r.Metrics.ContentChunks, r.MetricPopulation.AttemptedRequests = 99, 99
			r.PerformanceEligible, r.MeasurementProtocol = true, "recorded"
			tc.mutate(r)
			type derived struct {
				M        Metrics
				P        MetricPopulation
				Eligible bool
				Protocol string
			}
			snapshot := func() derived {
				return derived{r.Metrics, r.MetricPopulation, r.PerformanceEligible, r.MeasurementProtocol}
			}
			before := snapshot()
			err := r.Recompute()
			require.ErrorContains(t, err, tc.want)
			if diff := cmp.Diff(before, snapshot(), cmpopts.IgnoreUnexported(Metrics{}, MetricPopulation{})); diff != "" {
				t.Errorf("a failed recompute changed the report (-before +after):\n%s", diff)
			}
		})
	}
}

func TestRecomputeRejectsLegacy(t *testing.T) {
	var r Report
	require.NoError(t, r.UnmarshalJSON([]byte(`{"schema": "anvil-serving.benchmark/v1", "base_url": "", "completed": 1,
		"concurrency": 1, "context_tokens": 8192, "max_context_tokens": null, "max_tokens": 64,
		"metrics": {"ttft_p50_ms": 12.5}, "model": "m", "requests": 1, "run_id": "r", "serve_flags": {}}`)))
	require.ErrorContains(t, r.Recompute(), "no request_timings")
	require.Equal(t, 12.5, *r.Metrics.TTFT.P50)
}

// TestRecomputeThroughputEligibility: throughput_tok_s only for a run in
// which every planned request succeeded, with exact tokens and a positive
// wall clock; content_chunks_s only when the tokens are not exact.
func TestRecomputeThroughputEligibility(t *testing.T) {
	usageRow := func(i, tokens int) TimingRow {
		return TimingRow{RequestIndex: i, OutputTokens: new(tokens), OutputTokenSource: SourceUsage, ContentChunks: tokens,
			TimeToFirstOutputMS: 10, TTFTMS: 10, E2EMS: 100, GenerationMS: 90, VisibleGenerationMS: 90}
	}
	chunkRow := usageRow(1, 7)
	chunkRow.OutputTokenSource = SourceContentChunks
	tests := []struct {
		name        string
		requests    int
		wallMS      float64
		rows        []TimingRow
		failures    []Failure
		eligible    bool    // performance_eligible
		throughput  float64 // 0: null
		chunksPerS  float64 // 0: null
		throughputE bool    // throughput_performance_eligible
	}{
		{"all succeeded, exact", 2, 500, []TimingRow{usageRow(0, 30), usageRow(1, 20)}, nil, true, 100, 0, true},
		{"all succeeded, chunks counted", 2, 500, []TimingRow{usageRow(0, 30), chunkRow}, nil, true, 0, 74, false},
		{"a failure", 2, 500, []TimingRow{usageRow(0, 30)}, []Failure{{RequestIndex: 1, FailureClass: FailureTimeout}}, false, 0, 0, false},
		{"a failure, chunks counted", 2, 500, []TimingRow{chunkRow}, []Failure{{RequestIndex: 0, FailureClass: FailureTimeout}}, false, 0, 14, false},
		{"a planned request missing", 3, 500, []TimingRow{usageRow(0, 30), usageRow(1, 20)}, nil, false, 0, 0, false},
		{"zero wall clock", 2, 0, []TimingRow{usageRow(0, 30), usageRow(1, 20)}, nil, true, 0, 0, false},
		{"zero wall clock, chunks counted", 2, 0, []TimingRow{usageRow(0, 30), chunkRow}, nil, true, 0, 0, false},
	}
	ptr := func(v float64) *float64 {
		if v == 0 {
			return nil
		}
		return &v
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Report{Schema: Schema, Requests: tt.requests, WallClockMS: tt.wallMS, RequestTimings: tt.rows, Failures: tt.failures}
			require.NoError(t, r.Recompute())
			require.Equal(t, tt.eligible, r.PerformanceEligible, "performance_eligible")
			require.Equal(t, tt.throughputE, r.Metrics.ThroughputPerformanceEligible, "throughput_performance_eligible")
			require.Equal(t, tt.throughputE, r.MetricPopulation.AggregateThroughputEligible, "aggregate_throughput_eligible")
			require.Equal(t, ptr(tt.throughput), r.Metrics.ThroughputTokS, "throughput_tok_s")
			require.Equal(t, ptr(tt.chunksPerS), r.Metrics.ContentChunksPerSecond, "content_chunks_s")
		})
	}
}

// TestRecomputeP99Interpretation: the p99 is a tail estimate from
// P99MinimumSamples samples on, per metric by that metric's own sample
// count, overall by the successful rows.
func TestRecomputeP99Interpretation(t *testing.T) {
	report := func(n int) *Report {
		r := &Report{Schema: Schema, Requests: n, WallClockMS: 1000}
		for i := range n {
			row := TimingRow{RequestIndex: i, PromptTokens: new(1000), OutputTokens: new(9), OutputTokenSource: SourceUsage,
				TimeToFirstOutputMS: 10, TTFTMS: 10, E2EMS: 90, GenerationMS: 80, VisibleGenerationMS: 80,
				EffectivePrefillTokS: new(100000.0), DecodeTokS: new(100.0), TPOTMS: new(10.0)}
			if i == 0 { // one token: no decode rate, no TPOT
				row.OutputTokens, row.DecodeTokS, row.TPOTMS = new(1), nil, nil
			}
			r.RequestTimings = append(r.RequestTimings, row)
		}
		return r
	}
	for _, n := range []int{P99MinimumSamples - 1, P99MinimumSamples, P99MinimumSamples + 1} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			r := report(n)
			require.NoError(t, r.Recompute())
			interp := func(samples int) string {
				if samples >= 100 {
					return "tail-estimate"
				}
				return "descriptive-nearest-rank-only"
			}
			p := r.MetricPopulation
			require.Equal(t, interp(n), p.P99Interpretation)
			require.Equal(t, 100, p.P99MinimumRecommendedSamples)
			wantSamples := map[string]int{"decode_tok_s": n - 1, "e2e": n, "effective_prefill_tok_s": n, "tpot": n - 1, "ttft": n}
			require.Equal(t, wantSamples, p.P99SamplesByMetric)
			for metric, samples := range wantSamples {
				require.Equal(t, interp(samples), p.P99InterpretationByMetric[metric], metric)
			}
		})
	}
}

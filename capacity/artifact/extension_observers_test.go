package artifact

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// observerMembers sets every key of anvil_go.server_metrics and
// anvil_go.audit.
func observerMembers() *Extension {
	return &Extension{
		Version:  extensionVersion,
		Run:      &RunSummary{SentRequests: 8},
		Requests: []RequestDetail{},
		ServerMetrics: &ServerMetrics{
			Endpoint: "http://gpu-box:8000/metrics", Engine: new("vllm"),
			IntervalMS: 1000, TimeoutMS: 250, Samples: 12, Failed: 1, LastError: new("GET http://gpu-box:8000/metrics: status 503"),
			MaxPointsPerSeries: 240, DroppedSeries: 2, SkippedValues: 1,
			Series: []MetricSeries{
				{Name: "vllm:generation_tokens_total", Type: "counter", Labels: map[string]string{"engine": "0", "model_name": "m"},
					SamplesPerPoint: 2, OffsetsMS: []float64{0.5, 2000.25}, Values: []float64{100, 612},
					Increase: new(512.0), Resets: new(0)},
				{Name: "vllm:num_requests_running", Type: "gauge", Labels: map[string]string{},
					SamplesPerPoint: 1, OffsetsMS: []float64{0.5, 1000.5}, Values: []float64{4, 4}},
			},
			Checks: &ServerChecks{
				GenerationTokens: &TokenCheck{Counter: "vllm:generation_tokens_total", ServerIncrease: 512, ClientTokens: 500,
					Difference: 12, Allowance: 4, Verdict: tokensMismatch, Reason: new("another client was using the server")},
				TTFT: &TTFTCheck{Histogram: "vllm:time_to_first_token_seconds", ServerRequests: 8, ServerMeanMS: 101.5,
					ClientMeanMS: 103.25, NetworkAndClientMS: 1.75},
			},
			SpecDecode: &SpecDecode{Method: "counters", Drafts: new(60.0), DraftTokens: new(240.0), AcceptedTokens: new(120.0),
				AcceptanceRate: new(0.5), MeanAcceptedLength: new(3.0), PerPosition: []float64{0.9, 0.6, 0.3, 0.2},
				ClientTokensPerChunk: new(1.0), Agreement: "disagree", Note: new("the streams carried 1.00 tokens per chunk after their first, the server 3.00 per step")},
		},
		GPUMetrics: []ServerMetrics{{Endpoint: "http://node-a:9400/metrics", Engine: new("dcgm"),
			IntervalMS: 1000, TimeoutMS: 250, Samples: 3, MaxPointsPerSeries: 240,
			Series: []MetricSeries{{Name: "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", Type: "counter",
				Labels:          map[string]string{"gpu": "0", "UUID": "GPU-0", "Hostname": "node-a"},
				SamplesPerPoint: 1, OffsetsMS: []float64{0, 1000, 2000}, Values: []float64{1e9, 1.0003e9, 1.0006e9},
				Increase: new(600000.0), Resets: new(0)}}}},
		Energy: &Energy{Method: "counter", GPUs: 1, Joules: 600, MeanWatts: 300, Seconds: 2,
			IdleWatts: new(60.0), IdleJoules: new(120.0), IdleMethod: "counter", IdleSeconds: 1,
			OutputTokens: 100, TotalTokens: 500, JoulesPerOutputToken: new(6.0), JoulesPerToken: new(1.2),
			ActiveJoulesPerOutputToken: new(4.8), PricePerGPUHour: new(3.6), PricePerKWh: new(0.25),
			CostPerMillionOutputTokens: new(20.0), EnergyCostPerMillionOutputTokens: new(0.4166),
			PerGPU: map[string]float64{"node-a/0": 600}},
		Audit: &Audit{Verdict: auditSuspect, Reasons: []string{"scheduler latency p99 4.1 ms: timings below ~4 ms resolution are not trustworthy"},
			SchedLatencyP99MS: new(4.1), SchedLatencyMaxMS: new(12.5), SchedSamples: 900, GCPauses: 3,
			GCPauseMaxMS: new(0.25), GCPauseTotalMS: new(0.5), CPUShare: new(0.97), GOMAXPROCS: 2,
			SendLagP99MS: new(0.02), SendLagMaxMS: new(0.5), PoolWaits: 1, PoolWaitMaxMS: new(3.0),
			WakeLagP50MS: new(0.2), WakeLagP99MS: new(1.5), WakeLagMaxMS: new(2.5), WakeSamples: 200},
	}
}

// TestObserverMembersGolden pins anvil_go.server_metrics and anvil_go.audit
// as written and their round trip, byte for byte and field for field.
func TestObserverMembersGolden(t *testing.T) {
	extensionGolden(t, observerMembers(), "anvil_go_observers.golden.json")
}

// TestObserverMembersOptionalKeys: a gauge series has no increase and no
// resets key; members without checks have no checks key; a report without
// the members writes neither.
func TestObserverMembersOptionalKeys(t *testing.T) {
	r := syntheticReport()
	require.NoError(t, r.Recompute())
	r.AnvilGo = observerMembers()
	r.AnvilGo.ServerMetrics.Checks = nil
	var buf bytes.Buffer
	require.NoError(t, write(&buf, r))
	sm := generic(t, buf.Bytes()).(map[string]any)["anvil_go"].(map[string]any)["server_metrics"]
	require.NotContains(t, sortedKeys(sm), "checks")
	series := sm.(map[string]any)["series"].([]any)
	require.Equal(t, []string{"increase", "labels", "name", "offsets_ms", "resets", "samples_per_point", "type", "values"}, sortedKeys(series[0]))
	require.Equal(t, []string{"labels", "name", "offsets_ms", "samples_per_point", "type", "values"}, sortedKeys(series[1]))

	r.AnvilGo.ServerMetrics, r.AnvilGo.Audit = nil, nil
	buf.Reset()
	require.NoError(t, write(&buf, r))
	require.NotContains(t, buf.String(), `"server_metrics"`)
	require.NotContains(t, buf.String(), `"audit"`)
}

// TestObserverMembersRefused: wrong values are refused with their path,
// and a series whose offsets and values differ in length is refused.
func TestObserverMembersRefused(t *testing.T) {
	r := syntheticReport()
	require.NoError(t, r.Recompute())
	r.AnvilGo = observerMembers()
	var buf bytes.Buffer
	require.NoError(t, write(&buf, r))
	for _, tc := range []struct{ from, to, path, msg string }{
		{`"samples": 12`, `"samples": "12"`, "anvil_go.server_metrics.samples", "want an integer"},
		{`"verdict": "suspect"`, `"verdict": 1`, "anvil_go.audit.verdict", "want a string"},
		{`"server_increase": 512.0`, `"server_increase": null`, "anvil_go.server_metrics.checks.generation_tokens.server_increase", "want a number"},
		{"\"values\": [\n            100.0,\n", "\"values\": [\n", "anvil_go.server_metrics.series[0].values", "1 values for 2 offsets_ms"},
	} {
		doc := strings.Replace(buf.String(), tc.from, tc.to, 1)
		require.NotEqual(t, buf.String(), doc, tc.from)
		_, err := Read(strings.NewReader(doc))
		var fe *pathError
		require.ErrorAs(t, err, &fe, tc.path)
		require.Equal(t, tc.path, fe.Path)
		require.ErrorContains(t, err, tc.msg)
	}
}

// TestObserverMembersDocumented: every key the observers' members write
// is documented in their sections of capacity/PROTOCOL.md.
func TestObserverMembersDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "PROTOCOL.md"))
	require.NoError(t, err)
	start := strings.Index(string(doc), "#### `server_metrics`")
	require.Positive(t, start)
	end := strings.Index(string(doc)[start:], "\n## ")
	require.Positive(t, end)
	section := string(doc)[start : start+end]

	r := syntheticReport()
	require.NoError(t, r.Recompute())
	r.AnvilGo = observerMembers()
	var buf bytes.Buffer
	require.NoError(t, write(&buf, r))
	ext := generic(t, buf.Bytes()).(map[string]any)["anvil_go"].(map[string]any)
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if prefix == "labels" || prefix == "per_gpu" {
					continue // the server's own label names; GPUs' names
				}
				require.True(t, strings.Contains(section, "`"+k+"`") || strings.Contains(section, "`"+prefix+"."+k+"`"),
					"%s.%s is not in PROTOCOL.md's section", prefix, k)
				walk(k, x)
			}
		case []any:
			for _, x := range v {
				walk(prefix, x)
			}
		}
	}
	walk("server_metrics", ext["server_metrics"])
	walk("audit", ext["audit"])
	walk("server_metrics", ext["gpu_metrics"]) // the same keys

	start = strings.Index(string(doc), "#### `energy`")
	require.Positive(t, start)
	end = strings.Index(string(doc)[start:], "\n## ")
	require.Positive(t, end)
	section = string(doc)[start : start+end]
	walk("energy", ext["energy"])
}

// TestTokenCheckJudge: the verdict of the generation-token cross-check,
// case by case (capacity/PROTOCOL.md#anvil-go).
func TestTokenCheckJudge(t *testing.T) {
	for _, tc := range []struct {
		name           string
		diff, allow    float64
		resets         int
		verdict        string
		reasonContains string
	}{
		{"exact", 0, 0, 0, "exact", ""},
		{"within the allowance above", 7, 7, 0, "agree", ""},
		{"within the allowance below", -3, 5, 0, "agree", ""},
		{"above the allowance", 8, 7, 0, "mismatch", "8 tokens more"},
		{"below the allowance", -6, 5, 0, "mismatch", "6 tokens fewer"},
		{"exact but reset", 0, 0, 2, "mismatch", "reset 2 times"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &TokenCheck{Counter: "vllm:generation_tokens_total", Difference: tc.diff, Allowance: tc.allow,
				Reason: new("stale")}
			c.Judge(tc.resets)
			require.Equal(t, tc.verdict, c.Verdict)
			if tc.reasonContains == "" {
				require.Nil(t, c.Reason)
				return
			}
			require.NotNil(t, c.Reason)
			require.Contains(t, *c.Reason, tc.reasonContains)
		})
	}
}

// TestAuditSetVerdict: suspect exactly when a reason is listed; a nil
// audit is not suspect.
func TestAuditSetVerdict(t *testing.T) {
	ok := &Audit{}
	ok.SetVerdict()
	require.Equal(t, "ok", ok.Verdict)
	require.Equal(t, []string{}, ok.Reasons, "written as [] when ok")
	require.False(t, ok.Suspect())

	bad := &Audit{Verdict: "ok", Reasons: []string{"a GC pause of up to 12 ms stopped every stream's clock at once"}}
	bad.SetVerdict()
	require.Equal(t, "suspect", bad.Verdict)
	require.True(t, bad.Suspect())

	require.False(t, (*Audit)(nil).Suspect())
}

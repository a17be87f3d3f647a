package servermetrics

import (
	"fmt"
	"strings"
	"testing"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/stretchr/testify/require"
)

// TestParseCurated: parse keeps an engine's curated families, with their
// labels; histograms as _sum and _count, *_created families never.
func TestParseCurated(t *testing.T) {
	body := `# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0"} 4.0
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf"} 8.0
vllm:time_to_first_token_seconds_count{engine="0"} 8.0
vllm:time_to_first_token_seconds_sum{engine="0"} 0.8
# TYPE vllm:time_to_first_token_seconds_created gauge
vllm:time_to_first_token_seconds_created{engine="0"} 1.7e+09
# TYPE python_info gauge
python_info{version="3.12.3"} 1.0
`
	sc, err := parse(strings.NewReader(body), nil)
	require.NoError(t, err)
	lines := []string{fmt.Sprint("engine: ", sc.Engine)}
	for _, s := range sc.Samples {
		lines = append(lines, fmt.Sprintln(s.Name, s.Type, s.Labels, s.Value))
	}
	require.Equal(t, []string{
		"engine: vllm",
		"vllm:num_requests_waiting gauge map[engine:0] 4\n",
		"vllm:time_to_first_token_seconds_count counter map[engine:0] 8\n",
		"vllm:time_to_first_token_seconds_sum counter map[engine:0] 0.8\n",
	}, lines)
}

// TestCheckMismatch: the check holds the server's generation-token
// counter to the run's usage.
func TestCheckMismatch(t *testing.T) {
	inc := 5100.0
	m := &artifact.ServerMetrics{Engine: new("vllm"), Series: []artifact.MetricSeries{{
		Name: "vllm:generation_tokens_total", Type: typeCounter,
		OffsetsMS: []float64{0.4, 10000}, Values: []float64{0, inc}, Increase: &inc, Resets: new(0),
	}}}
	c := check(m, runFacts{CompletionTokens: 5000, MaxTokens: 64, DurationMS: 10000})
	require.Equal(t, "mismatch", c.GenerationTokens.Verdict)
	require.Equal(t, 100.0, c.GenerationTokens.Difference)
	require.Equal(t, "the server generated 100 tokens more than the run's responses reported (allowance 0): another client was using the server, or requests the run gave up on kept decoding", *c.GenerationTokens.Reason)
}

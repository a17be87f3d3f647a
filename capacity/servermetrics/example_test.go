package servermetrics_test

import (
	"fmt"
	"strings"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/servermetrics"
)

// Parse keeps an engine's curated families, with their labels; histograms
// as _sum and _count, *_created families never.
func ExampleParse() {
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
	sc, err := servermetrics.Parse(strings.NewReader(body), nil)
	if err != nil {
		panic(err)
	}
	fmt.Println("engine:", sc.Engine)
	for _, s := range sc.Samples {
		fmt.Println(s.Name, s.Type, s.Labels, s.Value)
	}
	// Output:
	// engine: vllm
	// vllm:num_requests_waiting gauge map[engine:0] 4
	// vllm:time_to_first_token_seconds_count counter map[engine:0] 8
	// vllm:time_to_first_token_seconds_sum counter map[engine:0] 0.8
}

// Check holds the server's generation-token counter to the run's usage.
func ExampleCheck() {
	inc := 5100.0
	m := &artifact.ServerMetrics{Engine: new("vllm"), Series: []artifact.MetricSeries{{
		Name: "vllm:generation_tokens_total", Type: servermetrics.TypeCounter,
		OffsetsMS: []float64{0.4, 10000}, Values: []float64{0, inc}, Increase: &inc, Resets: new(0),
	}}}
	c := servermetrics.Check(m, servermetrics.RunFacts{CompletionTokens: 5000, MaxTokens: 64, DurationMS: 10000})
	fmt.Println(c.GenerationTokens.Verdict, c.GenerationTokens.Difference)
	fmt.Println(*c.GenerationTokens.Reason)
	// Output:
	// mismatch 100
	// the server generated 100 tokens more than the run's responses reported (allowance 0): another client was using the server, or requests the run gave up on kept decoding
}

package fakeserver_test

import (
	"bufio"
	"fmt"
	"strings"

	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// The fake serves its engine's state at GET /metrics under vLLM's names;
// after one answered request nothing runs or waits and the generation
// counter holds the tokens it produced.
func Example_metrics() {
	cfg, err := fakeserver.Profile("plain")
	if err != nil {
		panic(err)
	}
	srv := fakeserver.New(cfg)
	defer srv.Close()
	body := `{"stream":false,"max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`
	resp, err := srv.Client().Post(srv.BaseURL()+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	resp.Body.Close()

	resp, err = srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		for _, name := range []string{"vllm:num_requests_running{", "vllm:num_requests_waiting{", "vllm:generation_tokens_total{"} {
			if strings.HasPrefix(line, name) {
				fmt.Println(line)
			}
		}
	}
	// Output:
	// vllm:num_requests_running{engine="0",model_name="fake-plain"} 0.0
	// vllm:num_requests_waiting{engine="0",model_name="fake-plain"} 0.0
	// vllm:generation_tokens_total{engine="0",model_name="fake-plain"} 8.0
}

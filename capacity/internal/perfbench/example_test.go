package perfbench_test

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/anvilbench/anvil/capacity/internal/perfbench"
)

// The benchmarks' server answers every chat request with its Schedule:
// Chunks content events, then the usage chunk and [DONE]. With no TTFT
// and no Gap it writes them as fast as the connection takes them.
func ExampleHandler() {
	srv := httptest.NewServer(perfbench.Handler(perfbench.Schedule{Chunks: 3, PromptTokens: 10}))
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"stream":true}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	content := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		switch line := sc.Text(); {
		case strings.Contains(line, `"content"`):
			content++
		case strings.Contains(line, `"usage"`):
			fmt.Println(strings.TrimSuffix(line[strings.Index(line, `"usage"`):], "}"))
		case line == "data: [DONE]":
			fmt.Println(line)
		}
	}
	fmt.Println(resp.Header.Get("Content-Type"), content, "content events")
	// Output:
	// "usage":{"prompt_tokens":10,"completion_tokens":3,"total_tokens":13}
	// data: [DONE]
	// text/event-stream 3 content events
}

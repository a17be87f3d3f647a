package fakeserver_test

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// Example starts a fake engine, streams one chat completion whose prompt
// asks for a canary marker and exactly three words "code", and compares the
// answer with the server's ground truth.
func Example() {
	srv := fakeserver.New(fakeserver.Fast())
	defer srv.Close()

	body := `{"model":"fake-fast","stream":true,"stream_options":{"include_usage":true},"max_tokens":64,
	  "messages":[{"role":"user","content":"Begin your answer with ANVIL_REQ_1717_00000. Then answer with exactly 3 words: code."}]}`
	resp, err := srv.Client().Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()

	var content string
	var completion int
	for _, ev := range strings.Split(string(data), "\n\n") {
		payload, ok := strings.CutPrefix(ev, "data: ")
		if !ok || payload == "[DONE]" {
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct{ Content string } `json:"delta"`
			} `json:"choices"`
			Usage *struct {
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(payload), &c); err != nil {
			panic(err)
		}
		for _, ch := range c.Choices {
			content += ch.Delta.Content
		}
		if c.Usage != nil {
			completion = c.Usage.CompletionTokens
		}
	}
	fmt.Println(content)

	srv.Close() // waits for the handler: the trace is final
	tr, _ := srv.Trace(0)
	fmt.Println("completion tokens:", completion, "=", tr.ReasoningTokens, "reasoning +", tr.ContentTokens, "content")
	fmt.Println("marker:", tr.Marker, "words:", tr.Words, "end:", tr.End)
	// Output:
	// ANVIL_REQ_1717_00000 code code code
	// completion tokens: 23 = 13 reasoning + 10 content
	// marker: ANVIL_REQ_1717_00000 words: 3 end: complete
}

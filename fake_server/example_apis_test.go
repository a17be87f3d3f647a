package fakeserver_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// The same prompt over chat and over Anthropic Messages: the same prompt
// tokens and the same answer, each API framing it its own way.
func Example_apis() {
	cfg := fakeserver.Fast()
	cfg.ReasoningTokens = fakeserver.Range{}
	srv := fakeserver.New(cfg)
	defer srv.Close()
	for _, req := range []struct{ path, body string }{
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"Say hello."}],"max_tokens":2,"temperature":0}`},
		{"/v1/messages", `{"messages":[{"role":"user","content":"Say hello."}],"max_tokens":2,"temperature":0}`},
		{"/v1/completions", `{"prompt":"Say hello.","max_tokens":2,"temperature":0}`},
	} {
		resp, err := http.Post(srv.URL+req.path, "application/json", strings.NewReader(req.body))
		if err != nil {
			fmt.Println(err)
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var answer struct {
			Choices []struct {
				Text    string `json:"text"`
				Message struct {
					Content string `json:"content"`
				} `json:"message"`
			} `json:"choices"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			Usage map[string]any `json:"usage"`
		}
		if err := json.Unmarshal(b, &answer); err != nil {
			fmt.Println(err)
			return
		}
		text, prompt := "", answer.Usage["prompt_tokens"]
		switch {
		case len(answer.Content) > 0:
			text, prompt = answer.Content[0].Text, answer.Usage["input_tokens"]
		case answer.Choices[0].Text != "":
			text = answer.Choices[0].Text
		default:
			text = answer.Choices[0].Message.Content
		}
		fmt.Printf("%s: %q, %v prompt tokens\n", req.path, text, prompt)
	}
	// Output:
	// /v1/chat/completions: "The code", 12 prompt tokens
	// /v1/messages: "The code", 12 prompt tokens
	// /v1/completions: "The code", 3 prompt tokens
}

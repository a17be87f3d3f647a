package chunk_test

import (
	"fmt"

	"github.com/anvilbench/anvil/capacity/internal/chunk"
)

func ExampleDecoder_Decode() {
	var d chunk.Decoder
	stream := []string{
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"Let me think"},"finish_reason":null}]}`,
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hello,\n\"world\""},"finish_reason":"stop"}]}`,
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":9.5,"total_tokens":21}}`,
		`{"choices":[]} {"choices":[]}`,
	}
	for _, data := range stream {
		c, err := d.Decode([]byte(data))
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		for _, ch := range c.Choices {
			fmt.Printf("reasoning %v, content %q (%v), finish %q (%v)\n",
				ch.HasReasoning(), ch.Content.Bytes, ch.Content.Kind, ch.FinishReason.Bytes, ch.FinishReason.Kind)
		}
		if u := c.Usage; u.Present {
			p, ok := u.PromptTokens.Int64()
			fmt.Printf("prompt tokens %d (%v), completion tokens: %v\n", p, ok, u.CompletionTokens.Kind)
		}
	}
	// Output:
	// reasoning true, content "" (absent), finish "" (null)
	// reasoning false, content "Hello,\n\"world\"" (string), finish "stop" (string)
	// prompt tokens 12 (true), completion tokens: not an integer
	// error: data after the JSON object
}

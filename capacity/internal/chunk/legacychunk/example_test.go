package legacychunk_test

import (
	"fmt"

	"github.com/anvilbench/anvil/capacity/internal/chunk/legacychunk"
)

// A test's struct of the leaf types decodes a payload as the client did.
func ExampleDecode() {
	var c struct {
		Choices []struct {
			Delta struct {
				Content   legacychunk.String   `json:"content"`
				Reasoning legacychunk.NonEmpty `json:"reasoning"`
			} `json:"delta"`
		} `json:"choices"`
		Usage struct {
			PromptTokens legacychunk.Int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	err := legacychunk.Decode([]byte(`{"choices":[{"delta":{"content":"hi","reasoning":""}}],"usage":{"prompt_tokens":"7"}}`), &c)
	fmt.Println(err, c.Choices[0].Delta.Content, c.Choices[0].Delta.Reasoning, c.Usage.PromptTokens)
	fmt.Println(legacychunk.Decode([]byte(`{} {}`), &c))
	// Output:
	// <nil> hi false {7 true}
	// data after the JSON object
}

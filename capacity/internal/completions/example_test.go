package completions_test

import (
	"fmt"

	"github.com/anvilbench/anvil/capacity/internal/completions"
)

func ExampleDecoder_Decode() {
	d := completions.NewDecoder()
	for _, data := range []string{
		`null`,
		`{"id":"cmpl-364","object":"text_completion","choices":[{"text":" or","index":0,"finish_reason":null}],"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}`,
		`{"id":"cmpl-364","object":"text_completion","choices":[{"text":"","index":0,"finish_reason":"length"}]}`,
		`{"id":"cmpl-364","object":"text_completion","choices":[],"usage":{"prompt_tokens":21,"completion_tokens":8,"total_tokens":29}}`,
	} {
		e, err := d.Decode([]byte(data))
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		if e.Null {
			fmt.Println("null event")
		}
		for _, c := range e.Choices {
			fmt.Printf("text %q, finish %q\n", c.Text.Bytes, c.FinishReason.Bytes)
		}
		if e.Usage.Present {
			p, _ := e.Usage.Prompt.Int64()
			c, _ := e.Usage.Completion.Int64()
			fmt.Printf("usage %d + %d\n", p, c)
		}
	}
	// Output:
	// null event
	// text " or", finish ""
	// usage 0 + 0
	// text "", finish "length"
	// usage 21 + 8
}

package responses_test

import (
	"fmt"

	"github.com/anvilbench/anvil/capacity/internal/responses"
)

func ExampleDecoder_Decode() {
	d := responses.NewDecoder()
	for _, ev := range []struct{ name, data string }{
		{"response.created", `{"type":"response.created","response":{"id":"resp_1","object":"response","status":"in_progress"}}`},
		{"response.reasoning_text.delta", `{"type":"response.reasoning_text.delta","delta":"Let me think","item_id":"rs_1"}`},
		{"response.output_text.delta", `{"type":"response.output_text.delta","delta":"Hello","item_id":"msg_1"}`},
		{"response.completed", `{"type":"response.completed","response":{"status":"completed","output":[],` +
			`"usage":{"input_tokens":21,"input_tokens_details":{"cached_tokens":16},"output_tokens":8,"output_tokens_details":{"reasoning_tokens":3},"total_tokens":29}}}`},
		{"", `{"error":{"code":500,"message":"The model produced output that does not match the expected peg-native format","type":"server_error"}}`},
	} {
		e, err := d.Decode([]byte(ev.name), []byte(ev.data))
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		switch e.Kind {
		case responses.Text, responses.Reasoning:
			fmt.Printf("%v %q\n", e.Kind, e.Delta.Bytes)
		case responses.Completed:
			in, _ := e.Usage.Input.Int64()
			cached, _ := e.Usage.Cached.Int64()
			reasoning, _ := e.Usage.Reasoning.Int64()
			fmt.Printf("%v: %d input tokens (%d cached), %d reasoning\n", e.Kind, in, cached, reasoning)
		case responses.Error:
			fmt.Printf("%v: %s\n", e.Kind, e.ErrorMessage())
		default:
			fmt.Printf("%v %s\n", e.Kind, e.Type.Bytes)
		}
	}
	// Output:
	// other response.created
	// reasoning "Let me think"
	// text "Hello"
	// completed: 21 input tokens (16 cached), 3 reasoning
	// error: The model produced output that does not match the expected peg-native format
}

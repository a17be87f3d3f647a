package jsonpick_test

import (
	"fmt"

	"github.com/anvilbench/anvil/capacity/internal/jsonpick"
)

func ExampleDecoder_Decode() {
	schema := jsonpick.Compile(
		jsonpick.Str("type"),
		jsonpick.Str("delta"),
		jsonpick.Obj("response", jsonpick.Obj("usage", jsonpick.Count("input_tokens"), jsonpick.Count("output_tokens"))),
	)
	var (
		typ   = schema.Slot("type")
		delta = schema.Slot("delta")
		input = schema.Slot("response.usage.input_tokens")
	)
	d := jsonpick.NewDecoder(schema)
	for _, data := range []string{
		`{"type":"response.output_text.delta","item_id":"msg_1","delta":"Hello,\n"}`,
		`{"type":"response.completed","response":{"output":[{"type":"message"}],"usage":{"input_tokens":21,"output_tokens":8}}}`,
		`{"type":"response.completed","response":{"usage":{"input_tokens":21.5}}}`,
		`{"type":"response.completed"} trailing`,
	} {
		if err := d.Decode([]byte(data)); err != nil {
			fmt.Println("error:", err)
			continue
		}
		n, ok := d.Value(input).Int.Int64()
		fmt.Printf("%s: delta %q, input tokens %d (%v, %v)\n", d.Value(typ).Bytes, d.Value(delta).Bytes, n, ok, d.Value(input).Int.Kind)
	}
	// Output:
	// response.output_text.delta: delta "Hello,\n", input tokens 0 (false, absent)
	// response.completed: delta "", input tokens 21 (true, integer)
	// response.completed: delta "", input tokens 0 (false, not an integer)
	// error: data after the JSON object
}

func ExampleMessage() {
	for _, raw := range []string{
		`{"code":500,"message":"The model produced output that does not match the expected peg-native format","type":"server_error"}`,
		`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
		`"boom"`,
	} {
		msg, ok := jsonpick.Message([]byte(raw))
		fmt.Printf("%q %v\n", msg, ok)
	}
	// Output:
	// "The model produced output that does not match the expected peg-native format" true
	// "Overloaded" true
	// "" false
}

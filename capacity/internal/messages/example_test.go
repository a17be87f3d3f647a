package messages_test

import (
	"fmt"

	"github.com/anvilbench/anvil/capacity/internal/messages"
)

func ExampleDecoder_Decode() {
	d := messages.NewDecoder()
	for _, ev := range []struct{ name, data string }{
		{"message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],` +
			`"usage":{"input_tokens":5,"cache_read_input_tokens":16,"output_tokens":0}}}`},
		{"ping", `{"type": "ping"}`},
		{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`},
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me"}}`},
		{"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hello"}}`},
		{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"output_tokens":8}}`},
		{"message_stop", `{"type":"message_stop"}`},
		{"error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
	} {
		e, err := d.Decode([]byte(ev.name), []byte(ev.data))
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		switch e.Kind {
		case messages.MessageStart:
			in, _ := e.Usage.Input.Int64()
			cached, _ := e.Usage.CacheRead.Int64()
			fmt.Printf("%v: %d input tokens + %d read from the cache\n", e.Kind, in, cached)
		case messages.Text, messages.Thinking:
			fmt.Printf("%v %q\n", e.Kind, e.Text.Bytes)
		case messages.MessageDelta:
			out, _ := e.Usage.Output.Int64()
			fmt.Printf("%v: %s after %d tokens\n", e.Kind, e.StopReason.Bytes, out)
		case messages.Error:
			fmt.Printf("%v: %s\n", e.Kind, e.ErrorMessage())
		default:
			fmt.Println(e.Kind)
		}
	}
	// Output:
	// message_start: 5 input tokens + 16 read from the cache
	// ping
	// content_block_start
	// thinking "Let me"
	// text "Hello"
	// message_delta: max_tokens after 8 tokens
	// message_stop
	// error: Overloaded
}

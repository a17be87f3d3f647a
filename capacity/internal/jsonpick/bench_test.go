package jsonpick_test

import (
	"testing"

	"github.com/anvilbench/anvil/capacity/internal/jsonpick"
)

// chatSchema reads what package chunk reads of a chat-completion chunk, so
// that the engine's cost compares with chunk's hand-written decoder on the
// same payload (chunk's BenchmarkDecode/vllm-content).
var chatSchema = jsonpick.Compile(
	jsonpick.Objs("choices",
		jsonpick.Obj("delta", jsonpick.Str("content"), jsonpick.Str("role"), jsonpick.Str("reasoning_content"), jsonpick.Str("reasoning")),
		jsonpick.Str("finish_reason")),
	jsonpick.Obj("usage", jsonpick.Count("prompt_tokens"), jsonpick.Count("completion_tokens"), jsonpick.Count("total_tokens"),
		jsonpick.Obj("prompt_tokens_details", jsonpick.Count("cached_tokens"))),
	jsonpick.Raw("error"),
	jsonpick.Str("object"),
	jsonpick.Str("message"),
	jsonpick.Raw("timings"),
)

var benchPayloads = []struct{ name, data string }{
	{"chat-vllm-content", `{"id":"chatcmpl-9b8e2a4c1d6f4e0a8b7c3d2e1f0a9b8c","object":"chat.completion.chunk","created":1767225600,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"content":" the"},"logprobs":null,"finish_reason":null}]}`},
	{"chat-vllm-usage", `{"id":"chatcmpl-9b8e2a4c1d6f4e0a8b7c3d2e1f0a9b8c","object":"chat.completion.chunk","created":1767225600,"model":"Qwen/Qwen3-8B","choices":[],"usage":{"prompt_tokens":1024,"total_tokens":1280,"completion_tokens":256,"prompt_tokens_details":{"cached_tokens":512}}}`},
}

// BenchmarkDecode measures the engine on chat-completion chunks read with
// chunk's members.
func BenchmarkDecode(b *testing.B) {
	for _, p := range benchPayloads {
		b.Run(p.name, func(b *testing.B) {
			d := jsonpick.NewDecoder(chatSchema)
			data := []byte(p.data)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if err := d.Decode(data); err != nil {
					b.Fatal(err)
				}
			}
			if d.Fallbacks() != 0 {
				b.Fatal("went to encoding/json")
			}
		})
	}
}

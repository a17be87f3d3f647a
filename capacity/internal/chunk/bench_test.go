package chunk

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/anvilbench/anvil/capacity/internal/chunk/legacychunk"
)

// benchPayloads are chunks in the shapes the engines' OpenAI-compatible
// servers write them (member order, extra members, nulls), with realistic
// ids and model names.
var benchPayloads = []struct{ name, data string }{
	{"vllm-content", `{"id":"chatcmpl-9b8e2a4c1d6f4e0a8b7c3d2e1f0a9b8c","object":"chat.completion.chunk","created":1767225600,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"content":" the"},"logprobs":null,"finish_reason":null}]}`},
	{"vllm-reasoning", `{"id":"chatcmpl-9b8e2a4c1d6f4e0a8b7c3d2e1f0a9b8c","object":"chat.completion.chunk","created":1767225600,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"reasoning_content":" Let"},"logprobs":null,"finish_reason":null}]}`},
	{"vllm-escaped-content", `{"id":"chatcmpl-9b8e2a4c1d6f4e0a8b7c3d2e1f0a9b8c","object":"chat.completion.chunk","created":1767225600,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"content":"\n    return \"ok\"\n"},"logprobs":null,"finish_reason":null}]}`},
	{"vllm-usage", `{"id":"chatcmpl-9b8e2a4c1d6f4e0a8b7c3d2e1f0a9b8c","object":"chat.completion.chunk","created":1767225600,"model":"Qwen/Qwen3-8B","choices":[],"usage":{"prompt_tokens":1024,"total_tokens":1280,"completion_tokens":256,"prompt_tokens_details":{"cached_tokens":512}}}`},
	{"sglang-content", `{"id":"3f2c8e1a9b7d4c6e8f0a1b2c3d4e5f60","object":"chat.completion.chunk","created":1767225600,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{"role":null,"content":" the","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}`},
	{"llamacpp-content", `{"choices":[{"finish_reason":null,"index":0,"delta":{"content":" the"}}],"created":1767225600,"id":"chatcmpl-Xq3RtZ8vLm2NpK7wYb4sHd9FgJc1","model":"gpt-3.5-turbo","system_fingerprint":"b6500-1a2b3c4d","object":"chat.completion.chunk"}`},
	{"llamacpp-usage", `{"choices":[],"created":1767225600,"id":"chatcmpl-Xq3RtZ8vLm2NpK7wYb4sHd9FgJc1","model":"gpt-3.5-turbo","system_fingerprint":"b6500-1a2b3c4d","object":"chat.completion.chunk","usage":{"completion_tokens":256,"prompt_tokens":1024,"total_tokens":1280},"timings":{"cache_n":512,"prompt_n":512,"prompt_ms":180.503,"prompt_per_token_ms":0.352,"prompt_per_second":2836.5,"predicted_n":256,"predicted_ms":5120.25,"predicted_per_token_ms":20.001,"predicted_per_second":49.99}}`},
	{"ollama-content", `{"id":"chatcmpl-728","object":"chat.completion.chunk","created":1767225600,"model":"qwen3:8b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":" the"},"finish_reason":null}]}`},
	{"ollama-reasoning", `{"id":"chatcmpl-728","object":"chat.completion.chunk","created":1767225600,"model":"qwen3:8b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":" Let"},"finish_reason":null}]}`},
}

// The client's structs as capacity/client_chunk.go has them (no role), for
// the cost of today's decoding.
type (
	todayChunk struct {
		Choices []todayChoice   `json:"choices"`
		Usage   *legacyUsage    `json:"usage"`
		Error   json.RawMessage `json:"error"`
	}
	todayChoice struct {
		Delta struct {
			Content          legacychunk.String   `json:"content"`
			ReasoningContent legacychunk.NonEmpty `json:"reasoning_content"`
			Reasoning        legacychunk.NonEmpty `json:"reasoning"`
		} `json:"delta"`
		FinishReason legacychunk.String `json:"finish_reason"`
	}
)

// todayDecoder is the client's chunkDecoder: one json.Decoder for the
// stream, fed one event at a time, and one chunk value reused.
type todayDecoder struct {
	src todaySource
	dec *json.Decoder
	fed int64
	c   todayChunk
}

type todaySource struct{ data []byte }

func (s *todaySource) Read(p []byte) (int, error) {
	if len(s.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.data)
	s.data = s.data[n:]
	return n, nil
}

func newTodayDecoder() *todayDecoder {
	d := &todayDecoder{}
	d.dec = json.NewDecoder(&d.src)
	return d
}

func (d *todayDecoder) decode(data []byte) error {
	clear(d.c.Choices)
	d.c.Choices = d.c.Choices[:0]
	d.c.Usage = nil
	d.c.Error = d.c.Error[:0]
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return ErrNotObject
	}
	d.src.data = data
	d.fed += int64(len(data))
	if err := d.dec.Decode(&d.c); err != nil {
		return err
	}
	if d.dec.InputOffset() != d.fed {
		return ErrTrailingData
	}
	return nil
}

// BenchmarkDecode compares the decoder ("fast") with the client's decoding
// by encoding/json ("encoding_json") on the same payloads.
func BenchmarkDecode(b *testing.B) {
	for _, p := range benchPayloads {
		data := []byte(p.data)
		b.Run(p.name+"/fast", func(b *testing.B) {
			var d Decoder
			if _, err := d.Decode(data); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := d.Decode(data); err != nil {
					b.Fatal(err)
				}
			}
			if d.fallbacks != 0 {
				b.Fatalf("%d payloads went to encoding/json", d.fallbacks)
			}
		})
		b.Run(p.name+"/encoding_json", func(b *testing.B) {
			d := newTodayDecoder()
			if err := d.decode(data); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if err := d.decode(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

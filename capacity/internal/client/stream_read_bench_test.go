package client

import (
	"strings"
	"testing"
	"time"

	"github.com/anvilbench/anvil/capacity/internal/itl"
)

// vllmStream renders a stream of n content chunks shaped as vLLM writes
// them, then usage and [DONE].
func vllmStream(n int) string {
	var sb strings.Builder
	for range n {
		sb.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" tok"},"logprobs":null,"finish_reason":null}]}` + "\n\n")
	}
	sb.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":64,"completion_tokens":1,"total_tokens":65}}` + "\n\ndata: [DONE]\n\n")
	return sb.String()
}

// BenchmarkReadStreamSteadyState reads a long stream (20,000 content
// chunks) through readStream with chunk timing on, as a measured worker
// does: the body wrapper, the framing, the decoding, the capture and the
// gaps. steady-allocs/chunk is the allocations the 20,000 chunks add
// beyond those of a 3,000-chunk stream (whose content already fills the
// visible capture), per chunk: what one more chunk costs once the
// stream's buffers have grown (0 is the target), whereas allocs/op counts
// the per-stream setup too.
func BenchmarkReadStreamSteadyState(b *testing.B) {
	const short, long = 3000, 23000
	shortBody, longBody := vllmStream(short), vllmStream(long)
	timer := NewChunkTimer(NewChunkRun(itl.DefaultStallRule(), 0))
	origin := time.Now()
	// One decoder for every stream, as the client's pool gives one
	// request after another.
	dec := ChatCompletions.NewDecoder()
	var ex Exchange
	read := func(body string, want int) {
		ex = Exchange{}
		timer.Begin(&ex, origin)
		res := &ex.stream
		dec.Reset()
		readStream(newTrackedBody(strings.NewReader(body), nil), res, dec)
		if !res.terminal || res.contentChunks != want {
			b.Fatalf("terminal %t, %d content chunks, want %d", res.terminal, res.contentChunks, want)
		}
		timer.Finish(true, nil)
	}
	for range 3 {
		read(longBody, long) // the worker's chunk timer and the run's distribution have grown
	}
	perShort := testing.AllocsPerRun(5, func() { read(shortBody, short) })
	perLong := testing.AllocsPerRun(5, func() { read(longBody, long) })
	b.ReportAllocs()
	b.SetBytes(int64(len(longBody)))
	for b.Loop() {
		read(longBody, long)
	}
	b.ReportMetric((perLong-perShort)/(long-short), "steady-allocs/chunk")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/long, "ns/chunk")
}

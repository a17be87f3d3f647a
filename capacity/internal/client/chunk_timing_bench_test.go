package client

import (
	"strings"
	"testing"
	"time"

	"github.com/anvilbench/anvil/capacity/internal/itl"
)

// streamChunks is the length of the streams the chunk benchmarks replay.
const streamChunks = 1000

// BenchmarkChunkApply measures the per-chunk path, one op per output
// chunk: streamResult.apply of a decoded content chunk's Event, with and without
// the worker's itl.Stream attached. The difference of the two is what
// chunk timing adds per chunk; allocs/op must be 0 for both (the Stream is
// reset every streamChunks chunks, as a worker reuses it per request).
func BenchmarkChunkApply(b *testing.B) {
	for _, withGaps := range []bool{false, true} {
		name := "without-gaps"
		if withGaps {
			name = "with-gaps"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var (
				timer = NewChunkTimer(itl.DefaultStallRule())
				ex    Exchange
				ev    Event
			)
			data := []byte(`{"choices":[{"delta":{"content":"ab"}}]}`)
			if err := ChatCompletions.NewDecoder().Decode(nil, data, &ev); err != nil {
				b.Fatal(err)
			}
			origin := time.Now()
			reset := func() {
				ex = Exchange{}
				if withGaps {
					timer.Begin(&ex, origin)
				}
			}
			reset()
			n := 0
			for b.Loop() {
				if n == streamChunks {
					n = 0
					reset()
				}
				n++
				ev.At = origin.Add(time.Duration(n) * time.Millisecond)
				ex.stream.apply(&ev)
			}
		})
	}
}

// BenchmarkReadStreamChunks reads a whole stream of streamChunks content
// chunks (one op per stream) with and without chunk timing; the
// per-stream allocations are the same with it, so chunk timing adds none
// per chunk. ns/chunk is reported.
func BenchmarkReadStreamChunks(b *testing.B) {
	var sb strings.Builder
	for range streamChunks {
		sb.WriteString("data: " + chunkJSON("ab ", "") + "\n\n")
	}
	sb.WriteString("data: [DONE]\n\n")
	body := sb.String()
	for _, withGaps := range []bool{false, true} {
		name := "without-gaps"
		if withGaps {
			name = "with-gaps"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			timer := NewChunkTimer(itl.DefaultStallRule())
			origin := time.Now()
			dec := ChatCompletions.NewDecoder() // reused, as the client's pool does
			var ex Exchange
			for b.Loop() {
				ex = Exchange{}
				if withGaps {
					timer.Begin(&ex, origin)
				}
				dec.Reset()
				readStream(newTrackedBody(strings.NewReader(body), nil), &ex.stream, dec)
				if ex.stream.contentChunks != streamChunks {
					b.Fatalf("read %d chunks, want %d", ex.stream.contentChunks, streamChunks)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/streamChunks, "ns/chunk")
		})
	}
}

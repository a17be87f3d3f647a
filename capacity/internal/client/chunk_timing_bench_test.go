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
				timer = NewChunkTimer(NewChunkRun(itl.DefaultStallRule(), 0))
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
			timer := NewChunkTimer(NewChunkRun(itl.DefaultStallRule(), 0))
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

// BenchmarkChunkPathAllocs is the per-chunk path of chunk timing as a
// measured phase runs it, one op per output chunk (a reasoning delta,
// which the visible capture does not keep, so that what allocates is
// chunk timing's): streamResult.apply with the worker's Stream attached,
// and every streamChunks chunks the
// stream's end, which adds its gaps to the phase's ChunkRun (Finish), and
// the next stream's start (Begin). Every phaseStreams streams a phase
// ends and the next begins with a new ChunkRun, made with the timer
// stopped as the phase's setup; a phase brings more gaps than
// itl.ExactGaps, so the exact gaps, the move into the sketch and the
// sketched ones are all on the measured path. The worker's Stream has
// grown on an earlier phase. allocs/op must be 0: the per-stream
// summary's one allocation (its ITL) over streamChunks chunks rounds to
// 0, and stream-allocs, each stream's allocations counted exactly beside
// it, says what it is.
func BenchmarkChunkPathAllocs(b *testing.B) {
	const phaseStreams = 2 * itl.ExactGaps / streamChunks
	rule := itl.DefaultStallRule()
	newRun := func() *ChunkRun { return NewChunkRun(rule, phaseStreams*streamChunks) }
	timer := NewChunkTimer(newRun())
	var (
		ex Exchange
		ev Event
	)
	ev.Reasoning = true // an output chunk the visible capture does not keep
	origin := time.Now()
	// at is the arrival of chunk n of a stream: 4 ms apart, with a jitter
	// of up to 6 us, so that the gaps spread over several buckets.
	at := func(n int) time.Time {
		return origin.Add(time.Duration(n)*4*time.Millisecond + time.Duration(n*7919%7)*time.Microsecond)
	}
	stream := func() {
		ex = Exchange{}
		timer.Begin(&ex, origin)
		for n := range streamChunks {
			ev.At = at(n)
			ex.stream.apply(&ev)
		}
		if timer.Finish(true, nil) == nil {
			b.Fatal("the stream was not summarized")
		}
	}
	stream() // the worker's Stream grows to streamChunks gaps
	perStream := testing.AllocsPerRun(10, stream)
	timer.run = newRun()
	b.ReportAllocs()
	ex = Exchange{}
	timer.Begin(&ex, origin)
	streams, n := 0, 0
	for b.Loop() {
		if n == streamChunks {
			timer.Finish(true, nil)
			if streams++; streams == phaseStreams {
				b.StopTimer()
				streams, timer.run = 0, newRun()
				b.StartTimer()
			}
			ex, n = Exchange{}, 0
			timer.Begin(&ex, origin)
		}
		ev.At = at(n)
		ex.stream.apply(&ev)
		n++
	}
	b.ReportMetric(perStream, "stream-allocs")
}

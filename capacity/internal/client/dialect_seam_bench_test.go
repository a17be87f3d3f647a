package client

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/chunk"
	"github.com/anvilbench/anvil/capacity/internal/itl"
)

// seamEvents are the data of a chat stream of n content chunks shaped as
// vLLM writes them (vllmStream), then usage and [DONE]: the events a
// stream hands the decoder once the framing has cut them.
func seamEvents(n int) [][]byte {
	content := []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" tok"},"logprobs":null,"finish_reason":null}]}`)
	usage := []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":64,"completion_tokens":1,"total_tokens":65}}`)
	events := make([][]byte, 0, n+2)
	for range n {
		events = append(events, content)
	}
	return append(events, usage, []byte(terminalData))
}

// viaDialect folds events into res as readStream does through the
// dialect seam: each event emptied and stamped, decoded by dec (a
// Decoder interface value) into the client's Event, and applied. (The
// events a contentRepeater recognizes skip Decode and the Event in
// readStream; every other event takes this path.)
func viaDialect(res *streamResult, dec Decoder, events [][]byte, origin time.Time) {
	ev := &res.event
	ev.Content, ev.Finish = res.contentBuf[:0], res.finishBuf[:0]
	for i, data := range events {
		ev.reset(origin.Add(time.Duration(i) * time.Millisecond))
		res.events++
		if err := dec.Decode(nil, data, ev); err != nil {
			panic(err)
		}
		if !res.apply(ev) {
			return
		}
	}
}

// direct folds events into res as readStream did before the seam: the
// chat chunk decoder called directly and its chunk folded into res
// without an Event between them (applyChunk, the former apply).
func direct(res *streamResult, dec *chunk.Decoder, events [][]byte, origin time.Time) {
	for i, data := range events {
		at := origin.Add(time.Duration(i) * time.Millisecond)
		res.events++
		if isTerminalBytes(data) {
			res.terminal, res.terminalAt = true, at
			return
		}
		c, err := dec.Decode(data)
		if err != nil {
			panic(err)
		}
		if c.HasError() || c.IsErrorObject() {
			panic("error object")
		}
		applyChunk(res, c, data, at)
	}
}

// applyChunk is streamResult.apply as it was before the dialect seam
// (folding a decoded chat chunk, decoded from data), kept as the
// baseline the seam's cost is measured against.
func applyChunk(res *streamResult, c *chunk.Chunk, data []byte, at time.Time) {
	reasoning, content := false, false
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.HasReasoning() {
			reasoning = true
		}
		if ch.Content.NonEmpty() {
			content = true
			res.capture.Append(transientString(ch.Content.Bytes))
		}
		if ch.FinishReason.NonEmpty() {
			res.finish(ch.FinishReason.Bytes)
		}
	}
	if reasoning {
		res.reasoningChunks++
	}
	if content {
		res.contentChunks++
		if res.firstContent.IsZero() {
			res.firstContent = at
		}
	}
	tokens, counted := -1, false
	if !c.Usage.Present {
		res.usageMissed = true
	} else if !res.usageMissed {
		if n, ok := c.Usage.CompletionTokens.Int64(); ok && !c.Usage.CompletionTokens.Quoted {
			tokens, counted = int(min(max(n-res.lastCompletion, -1), itl.MaxTokensPerEvent+1)), true
			res.lastCompletion = n
		}
	}
	if reasoning || content {
		if res.firstOutput.IsZero() {
			res.firstOutput = at
		}
		if res.gaps != nil {
			if counted {
				res.gaps.AddTokens(at.Sub(res.origin), tokens)
			} else {
				res.gaps.Add(at.Sub(res.origin))
			}
		}
	}
	if c.Usage.Present {
		res.usage = usageOf(&c.Usage, data)
	}
	if c.Timings != nil {
		res.timings = append(res.timings[:0], c.Timings...)
	}
}

// seamOutcome is what both folds must agree on.
type seamOutcome struct {
	Events, Content, Reasoning, Chunks, Gaps int
	Terminal                                 bool
	Usage                                    Usage
	Visible                                  int
	FirstOutput, TerminalAt                  time.Time
}

// outcomeOf is what a fold of the seam events left in res and gaps.
func outcomeOf(res *streamResult, gaps *itl.Stream) seamOutcome {
	s, err := gaps.Summary(itl.DefaultStallRule(), nil)
	if err != nil {
		panic(err)
	}
	return seamOutcome{
		Events: res.events, Content: res.contentChunks, Reasoning: res.reasoningChunks, Chunks: s.OutputChunks, Gaps: s.Gaps,
		Terminal: res.terminal, Usage: res.usage, Visible: res.capture.Len(),
		FirstOutput: res.firstOutput, TerminalAt: res.terminalAt,
	}
}

// TestDirectFoldIsTheSeam checks that the baseline of
// BenchmarkDialectSeam does the seam's work: both folds of the same
// events give the same result.
func TestDirectFoldIsTheSeam(t *testing.T) {
	events := seamEvents(500)
	origin := time.Now()
	var seamGaps, directGaps itl.Stream
	seam := streamResult{gaps: &seamGaps, origin: origin}
	viaDialect(&seam, ChatCompletions.NewDecoder(), events, origin)
	base := streamResult{gaps: &directGaps, origin: origin}
	direct(&base, new(chunk.Decoder), events, origin)
	want := outcomeOf(&base, &directGaps)
	require.Equal(t, want, outcomeOf(&seam, &seamGaps))
	require.Equal(t, 500, want.Content)
	require.True(t, want.Terminal)
}

// BenchmarkDialectSeam measures what the dialect seam's Decode path
// costs a chat event: the same 2,000 pre-framed chunks folded into a
// result through the Decoder interface and the client's Event (seam, the
// path of every event readStream's fast path does not take), and by the chat
// chunk decoder called directly with its chunk folded as before the seam
// (direct); allocs/op is the per-stream setup (the visible capture's
// buffer), the same for both. On a shared machine the two sub-benchmarks
// run minutes apart under different loads: paired folds the stream both
// ways in every iteration (in alternating order) and reports the median
// of each and of their per-iteration ratio, seam/direct.
func BenchmarkDialectSeam(b *testing.B) {
	const n = 2000
	events := seamEvents(n)
	origin := time.Now()
	var gaps itl.Stream
	var res streamResult
	reset := func() {
		gaps.Reset()
		res = streamResult{gaps: &gaps, origin: origin}
	}
	check := func() {
		if !res.terminal || res.contentChunks != n {
			b.Fatalf("terminal %t, %d content chunks, want %d", res.terminal, res.contentChunks, n)
		}
	}
	b.Run("seam", func(b *testing.B) {
		dec := ChatCompletions.NewDecoder()
		b.ReportAllocs()
		for b.Loop() {
			reset()
			dec.Reset()
			viaDialect(&res, dec, events, origin)
			check()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/chunk")
	})
	b.Run("direct", func(b *testing.B) {
		dec := new(chunk.Decoder)
		b.ReportAllocs()
		for b.Loop() {
			reset()
			direct(&res, dec, events, origin)
			check()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/chunk")
	})
	b.Run("paired", func(b *testing.B) {
		seamDec, directDec := ChatCompletions.NewDecoder(), new(chunk.Decoder)
		var seamNS, directNS, ratios []float64
		timed := func(fold func()) float64 {
			reset()
			start := time.Now()
			fold()
			d := time.Since(start)
			check()
			return float64(d.Nanoseconds()) / n
		}
		viaSeam := func() { seamDec.Reset(); viaDialect(&res, seamDec, events, origin) }
		viaDirect := func() { direct(&res, directDec, events, origin) }
		for i := 0; b.Loop(); i++ {
			var s, d float64
			if i%2 == 0 {
				s, d = timed(viaSeam), timed(viaDirect)
			} else {
				d, s = timed(viaDirect), timed(viaSeam)
			}
			seamNS, directNS, ratios = append(seamNS, s), append(directNS, d), append(ratios, s/d)
		}
		b.ReportMetric(median(seamNS), "seam-ns/chunk")
		b.ReportMetric(median(directNS), "direct-ns/chunk")
		b.ReportMetric(median(ratios), "seam/direct")
	})
}

// median is the median of xs (which it sorts).
func median(xs []float64) float64 {
	slices.Sort(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

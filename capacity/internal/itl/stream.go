package itl

import (
	"fmt"
	"time"

	"github.com/anvilbench/anvil/capacity/internal/field"
)

// Stream collects the output events of one streamed response. The client
// keeps one Stream per worker and reuses it: Reset before each request, Add
// for each output event, then Summary (or Run.Record). Once its buffer has
// grown to the longest stream seen (at most ExactGaps gaps), Add allocates
// nothing. The zero Stream is empty and ready. A Stream is not safe for
// concurrent use.
type Stream struct {
	gaps   gapSet
	events int           // output events added
	last   time.Duration // offset of the latest output event
	err    *field.Error  // the first out-of-order event, if any
	// counted is the number of events added with a token count
	// (AddTokens): all of them makes the stream's gaps per token.
	counted int
}

// Reset empties s for the next request, keeping its memory.
func (s *Stream) Reset() {
	s.gaps.reset()
	s.events = 0
	s.last = 0
	s.err = nil
	s.counted = 0
}

// MaxTokensPerEvent bounds the token count AddTokens splits a gap over: a
// larger count (no decode step produces it) is not believed, and the event
// is added as Add adds it.
const MaxTokensPerEvent = 1024

// AddTokens records an output event as Add does, knowing how many tokens
// it carried: the increase of usage.completion_tokens since the previous
// chunk, which a server reporting usage on every chunk tells exactly
// (vLLM's stream_options.continuous_usage_stats). The gap since the
// previous token-carrying event is then split evenly over the event's
// tokens: k tokens after a gap g add k gaps of g/k (the nanoseconds that
// do not divide go one each to the first gaps), the latency of each token
// when a step emits several at once (speculative decoding, batched
// chunks), which one gap per chunk overstates k times. An event of 0
// tokens adds no gap, and the next token's gap runs from the last token.
// The first event ends the time to first output and adds no gap whatever
// it carried. tokens < 0 or above MaxTokensPerEvent: the event is added as
// Add adds it, and the stream's gaps are no longer per token.
//
// A stream whose every event came through AddTokens reports its gaps as
// per token (Summary.PerToken).
func (s *Stream) AddTokens(at time.Duration, tokens int) {
	if tokens < 0 || tokens > MaxTokensPerEvent {
		s.counted = -1 << 30 // never per token again
		s.Add(at)
		return
	}
	s.counted++
	d := at - s.last
	switch {
	case s.events == 0 || d < 0:
		s.addSlow(at)
		return
	case tokens == 0:
		s.events++
		return
	case tokens == 1:
		s.Add(at)
		return
	}
	k := time.Duration(tokens)
	q, r := d/k, d%k
	for i := range k {
		g := q
		if i < r {
			g++
		}
		s.gaps.add(g)
	}
	s.last = at
	s.events++
}

// PerToken reports whether every event since the last Reset came with its
// token count (AddTokens), so that the gaps are per token.
func (s *Stream) PerToken() bool { return s.events > 0 && s.counted == s.events }

// Add records an output event (a reasoning or content chunk) that arrived
// at offset at, on any clock common to the stream's events (the run's
// monotonic offsets). The first event is the end of the time to first
// output and adds no gap; each later one adds the gap from the previous
// event. Offsets must not decrease: an earlier offset is dropped and makes
// Summary and Run.Record fail with a *field.Error (Kind ErrInvalidInput).
func (s *Stream) Add(at time.Duration) {
	d := at - s.last
	if s.events == 0 || d < 0 {
		s.addSlow(at)
		return
	}
	s.gaps.add(d)
	s.last = at
	s.events++
}

// addSlow is Add for the first event and for an out-of-order one, kept out
// of line so that Add's common path stays a subtraction, two compares and
// an append.
//
//go:noinline
func (s *Stream) addSlow(at time.Duration) {
	if s.events == 0 {
		s.last = at
		s.events = 1
		return
	}
	s.misordered(at)
}

// misordered records the first event that arrived before its predecessor.
func (s *Stream) misordered(at time.Duration) {
	if s.err == nil {
		s.err = inputError("Stream.Add at", at, fmt.Sprintf("must not be before the previous output event (event %d at %v)", s.events-1, s.last))
	}
}

// Chunks returns the number of output events added since the last Reset.
func (s *Stream) Chunks() int { return s.events }

// Gaps returns the number of gaps: Chunks() - 1 without token counts
// (AddTokens splits a chunk's gap over its tokens), 0 without events.
func (s *Stream) Gaps() int { return s.gaps.count() }

// ITL is one request's inter-token latency in milliseconds: the JSON object
// "itl_ms" of an entry of "requests". Nearest-rank percentiles of the
// stream's own gaps.
type ITL struct {
	// P50 becomes "p50".
	P50 float64
	// P90 becomes "p90".
	P90 float64
	// P99 becomes "p99".
	P99 float64
	// Max becomes "max".
	Max float64
}

// Summary is one stream's chunk timing. ITL, OutputChunks, Stalls and
// TokensPerChunk are the members of the stream's entry of the artifact's
// "requests" array; the others are not written but explain them.
type Summary struct {
	// ITL becomes "itl_ms"; nil (null) when the stream has no gap.
	ITL *ITL
	// OutputChunks becomes "output_chunks": reasoning + content events.
	OutputChunks int
	// Stalls becomes "stalls": gaps longer than StallThresholdMS.
	Stalls int
	// TokensPerChunk becomes "tokens_per_chunk": usage completion tokens /
	// OutputChunks; nil (null) without usage or without output.
	TokensPerChunk *float64

	// Gaps is the number of gaps, OutputChunks - 1 (0 without output), or
	// the tokens after the first event when PerToken.
	Gaps int
	// PerToken is true when the gaps are per token (every event came with
	// its token count, Stream.AddTokens), false when they are per chunk.
	PerToken bool
	// StallThresholdMS is the threshold the stall rule applied to this
	// stream, in ms: Override, or max(Relative * the median gap, Floor).
	StallThresholdMS float64
	// Exact is true when ITL and Stalls are exact (at most ExactGaps gaps).
	Exact bool
	// RelativeError bounds the relative error of the ITL percentiles: 0
	// when Exact, RelativeAccuracy otherwise. Max is always exact.
	RelativeError float64
}

// Summary summarizes the stream under rule. completionTokens is the usage
// completion token count the server reported, nil when it did not. It fails
// with a *field.Error (Kind ErrInvalidInput) when the rule is invalid, an event was out of order,
// or completionTokens is negative. Summary may reorder the stream's stored
// gaps, so a Stream must not be summarized concurrently.
func (s *Stream) Summary(rule StallRule, completionTokens *int) (Summary, error) {
	if err := rule.Validate(); err != nil {
		return Summary{}, err
	}
	if s.err != nil {
		return Summary{}, s.err
	}
	sum := Summary{OutputChunks: s.events, Gaps: s.gaps.count(), Exact: !s.gaps.spilled, PerToken: s.PerToken()}
	if completionTokens != nil && s.events > 0 {
		tpc, err := TokensPerChunk(*completionTokens, s.events)
		if err != nil {
			return Summary{}, err
		}
		sum.TokensPerChunk = &tpc
	}
	if !sum.Exact {
		sum.RelativeError = RelativeAccuracy
	}
	n := s.gaps.count()
	if n == 0 {
		sum.StallThresholdMS = rule.threshold(0) / 1e6
		return sum, nil
	}
	g := &s.gaps
	g.prepare()
	threshold := rule.threshold(g.nanos(rank(500, n)))
	sum.ITL = &ITL{P50: g.at(rank(500, n)), P90: g.at(rank(900, n)), P99: g.at(rank(990, n)), Max: ms(g.largest())}
	sum.Stalls = g.above(threshold)
	sum.StallThresholdMS = threshold / 1e6
	return sum, nil
}

// TokensPerChunk returns completionTokens / outputChunks: how many tokens
// the server packs into one output event on average (1 for a server that
// streams token by token). completionTokens must be at least 0 and
// outputChunks at least 1; otherwise it returns a *field.Error (Kind ErrInvalidInput).
func TokensPerChunk(completionTokens, outputChunks int) (float64, error) {
	if completionTokens < 0 {
		return 0, inputError("completion tokens", completionTokens, "must be >= 0")
	}
	if outputChunks < 1 {
		return 0, inputError("output chunks", outputChunks, "must be >= 1")
	}
	return float64(completionTokens) / float64(outputChunks), nil
}

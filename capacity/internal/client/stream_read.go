package client

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unsafe"

	"github.com/anvilbench/anvil/capacity/artifact"

	"github.com/anvilbench/anvil/capacity/internal/itl"
	"github.com/anvilbench/anvil/capacity/sse"
)

// MaxEventSize is the largest SSE event the client accepts, in bytes of the
// wire form: a larger one fails the request (capacity.MaxEventSize says
// why).
const MaxEventSize = 256 << 10

// maxStreamEvents is the most SSE events one response may carry: two per
// token of the largest MaxTokens (a token may arrive as a reasoning and a
// content delta) plus room for role, finish, usage and keep-alive events.
// A stream with more cannot be a response to any allowed max_tokens and
// fails with stream_validation_failed.
const maxStreamEvents = 2*MaxMaxTokens + 1024

// MaxMaxTokens is the largest max_tokens a request may ask for
// (Workload.MaxTokens and a Source's Request.MaxTokens are bounded by it).
const MaxMaxTokens = 65536

// maxFinishReasons bounds the finish reasons kept for a failure's metadata.
const maxFinishReasons = 8

// maxDrainAfterTerminal bounds the bytes read after the terminal event
// ([DONE]) so that the
// connection can be reused; more than that and the body is simply closed.
const maxDrainAfterTerminal = 64 << 10

// MaxErrorExcerpt bounds the bytes of a server's text quoted in a failure
// message. The message is scrubbed of credentials as a whole and then cut
// at 2,048 code points (at most 4,096 bytes of JSON; Failure.SetErrorMessage), far
// below this bound: a credential the excerpt cut in part lies beyond that
// cut, so no part of one survives.
const MaxErrorExcerpt = 16 << 10

// maxFinishReasonBytes bounds a finish reason kept while reading; the
// failure metadata keeps at most maxFinishReasonRunes of it, after the
// credentials were scrubbed from the whole kept text.
const maxFinishReasonBytes = 1024

// streamResult is what the client learned from one response stream. Times
// are monotonic stamps; a zero time means "not seen".
type streamResult struct {
	firstEvent   time.Time // first SSE event of any kind
	firstOutput  time.Time // first non-empty reasoning or content delta
	firstContent time.Time // first non-empty content delta
	terminalAt   time.Time // arrival of the terminal event (data: [DONE])
	terminal     bool

	events          int
	contentChunks   int
	reasoningChunks int
	usage           Usage
	finishReasons   []string
	capture         visibleCapture

	// invalid names the stream-contract violation; "" when none was seen.
	invalid string
	// invalidType is the error_type of the violation, invalidClass its
	// failure class when not stream_validation_failed.
	invalidType  string
	invalidClass artifact.FailureClass
	// vectors and dimension are an embeddings answer's (Event.Vectors).
	vectors, dimension int
	// readErr is the error that ended the reading (nil at a clean end).
	readErr error
	// trailing counts field bytes after the last complete event at EOF;
	// trailingDone says they were only the terminal event's data line.
	trailing     int64
	trailingDone bool

	// timings is the raw JSON of the last "timings" object of the stream
	// (llama.cpp), nil when none.
	timings []byte

	// reader, when set, holds the worker's reader of its streams (made at
	// its first; without it, the stream has its own).
	reader **sse.Reader
	// gaps, when set, receives the arrival offset from origin of every
	// output event (reasoning or content): the stream's chunk timing.
	gaps   *itl.Stream
	origin time.Time
	// lastCompletion is the last usage.completion_tokens seen (0 before
	// any), from which a chunk's tokens are counted.
	lastCompletion int64
	// usageMissed: a chunk came without usage.
	usageMissed bool

	// event is the event being decoded, contentBuf and finishBuf the
	// storage of its pieces (a chat chunk has one choice), reused from
	// one event to the next.
	event                 Event
	contentBuf, finishBuf [2][]byte
}

// readStream reads the SSE events of body (package sse: go-sse's framing,
// without allocating) until the terminal event, the end of the body, a
// read error or a contract violation, decodes each with dec into the
// client's Event and records what it saw in res. After the terminal event
// the rest of the body is left to drainAfterTerminal. Every event is
// stamped with the time of the read that completed it, before it is
// decoded.
func readStream(body *trackedBody, res *streamResult, dec Decoder) {
	var events *sse.Reader
	switch {
	case res.reader == nil:
		events = sse.NewReader(body, MaxEventSize)
	case *res.reader == nil:
		events = sse.NewReader(body, MaxEventSize)
		*res.reader = events
	default:
		events = *res.reader
		events.Reset(body)
	}
	defer events.Reset(nil) // the worker's reader keeps no hold on this body
	ev := &res.event
	ev.Content, ev.Finish = res.contentBuf[:0], res.finishBuf[:0]
	fast, _ := dec.(contentRepeater)
	for {
		if fast != nil {
			// The common event, recognized and decoded in one pass over
			// its bytes (contentRepeater), then folded in as apply would.
			if n, text, ok := fast.repeatedContent(events.Pending()); ok && events.SkipDataEvent(n) {
				at := body.lastRead
				if res.events++; res.events == 1 {
					res.firstEvent = at
				}
				if res.events > maxStreamEvents {
					res.tooManyEvents()
					return
				}
				res.content(at, text)
				continue
			}
		}
		if !events.Scan() {
			break
		}
		raw := events.Event()
		ev.reset(body.lastRead) // stamp first: the event is complete at this read
		res.events++
		if res.events == 1 {
			res.firstEvent = ev.At
		}
		if res.events > maxStreamEvents {
			res.tooManyEvents()
			return
		}
		if err := dec.Decode(raw.Type, raw.Data, ev); err != nil {
			res.malformed(err, raw.Data)
			return
		}
		if !res.apply(ev) {
			return
		}
	}
	res.ended(events, body.endAt, dec)
}

// ended records how the reading of events ended, the body having ended at
// endAt. It, malformed and tooManyEvents are functions of their own, out
// of readStream's frame, which is on the stack while the stream is read:
// a shallower stack is a smaller one once the garbage collector shrinks
// it.
func (res *streamResult) ended(events *sse.Reader, endAt time.Time, dec Decoder) {
	if err := events.Err(); err != nil {
		res.readErr = err
		if errors.Is(err, bufio.ErrTooLong) {
			res.invalidType = ErrorTypeEventTooLarge
			res.invalid = fmt.Sprintf("event larger than MaxEventSize (%d bytes)", MaxEventSize)
		}
		return
	}
	// The body ended (EOF, or the body cut inside a line): the bytes of an
	// event it cut lose nothing when they are alone the terminal event.
	n, head := events.Trailing()
	res.trailing = n
	if data, ok := trailingData(n, head); ok {
		ev := &res.event
		ev.reset(endAt)
		res.trailingDone = dec.Decode(nil, data, ev) == nil && ev.Done && ev.carriesNothing()
	}
}

// malformed records an event whose data does not decode.
func (res *streamResult) malformed(err error, data []byte) {
	res.invalidType = ErrorTypeMalformedChunk
	res.invalid = fmt.Sprintf("malformed JSON chunk (event %d): %v: %s", res.events, err, Excerpt(string(data)))
}

// tooManyEvents records a stream of more than maxStreamEvents events.
func (res *streamResult) tooManyEvents() {
	res.invalidType = ErrorTypeTooManyEvents
	res.invalid = fmt.Sprintf("more than maxStreamEvents (%d) events: more chunks than any max_tokens allows", maxStreamEvents)
}

// A contentRepeater is a Decoder with a fast path for the common event
// of a stream: one that repeats the last content chunk but for its text.
type contentRepeater interface {
	// repeatedContent returns, when rest begins with one whole event,
	// "data: " + data + "\n\n", whose data Decode would decode into an
	// Event that holds only one content text (no reasoning, finish
	// reason, usage, timings, error or end), the event's length in bytes
	// and that text (a piece of rest, empty for an empty delta), found in
	// one pass over the event's bytes. What later calls of Decode
	// return is what they would return after Decode of that data.
	repeatedContent(rest []byte) (n int, text []byte, ok bool)
}

// content folds in an event that carried only the content text text,
// which arrived at at: what apply does with such an Event (without
// usage: the stream's chunks are not counted).
func (res *streamResult) content(at time.Time, text []byte) {
	res.usageMissed = true
	if len(text) == 0 {
		return
	}
	res.capture.Append(transientString(text))
	res.contentChunks++
	if res.firstContent.IsZero() {
		res.firstContent = at
	}
	if res.firstOutput.IsZero() {
		res.firstOutput = at
	}
	if res.gaps != nil {
		res.gaps.Add(at.Sub(res.origin))
	}
}

// maxAnswerBody bounds the body of an answer that does not stream (one
// JSON body, Dialect.Streams false): an embeddings batch of large vectors
// fits, and a larger body fails the request instead of filling memory.
const maxAnswerBody = 64 << 20

// readAnswer reads an answer that does not stream: the whole body, at most
// maxAnswerBody bytes, decoded with dec as one event without a name that
// arrived with the body's last bytes, and records it in res as readStream
// records an event.
func readAnswer(body *trackedBody, res *streamResult, dec Decoder) {
	data, err := io.ReadAll(io.LimitReader(body, maxAnswerBody+1))
	if err != nil {
		res.readErr = err
		return
	}
	if len(data) > maxAnswerBody {
		res.invalidType = ErrorTypeEventTooLarge
		res.invalid = fmt.Sprintf("answer larger than maxAnswerBody (%d bytes)", maxAnswerBody)
		return
	}
	ev := &res.event
	ev.Content, ev.Finish = res.contentBuf[:0], res.finishBuf[:0]
	ev.reset(body.lastRead)
	res.events, res.firstEvent = 1, ev.At
	if err := dec.Decode(nil, data, ev); err != nil {
		res.invalidType = ErrorTypeMalformedChunk
		res.invalid = fmt.Sprintf("malformed JSON answer: %v: %s", err, Excerpt(string(data)))
		return
	}
	if res.apply(ev) {
		// The body's end is the answer's end.
		res.terminal, res.terminalAt = true, ev.At
	}
}

// apply folds one decoded event into the result and reports whether the
// answer goes on: an error or the terminal event ends it. Its common path
// (a content or reasoning delta) allocates nothing.
func (res *streamResult) apply(ev *Event) bool {
	if ev.Error != nil {
		res.invalidType = ErrorTypeServerError
		res.invalid = "in-stream " + ev.ErrorKind + ": " + Excerpt(string(ev.Error))
		return false
	}
	if ev.Invalid != "" {
		res.invalidClass, res.invalidType, res.invalid = artifact.FailureEmbeddingsInvalid, ev.InvalidType, ev.Invalid
		return false
	}
	if ev.Vectors > 0 {
		res.vectors, res.dimension = ev.Vectors, ev.Dimension
	}
	at := ev.At
	reasoning, content := ev.Reasoning, false
	for _, c := range ev.Content {
		if len(c) > 0 {
			content = true
			res.capture.Append(transientString(c))
		}
	}
	for _, f := range ev.Finish {
		if len(f) > 0 {
			res.finish(f)
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
	// With usage on every event (vLLM's continuous_usage_stats), the
	// increase of the completion tokens is the event's tokens. One event
	// without it (usage only at the end, as most servers send it) and the
	// stream's chunks are not counted.
	tokens, counted := -1, false
	if !ev.Usage.Present {
		res.usageMissed = true
	} else if n := ev.Usage.Completion; !res.usageMissed && n.ok {
		tokens, counted = int(min(max(n.v-res.lastCompletion, -1), itl.MaxTokensPerEvent+1)), true
		res.lastCompletion = n.v
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
	if ev.Usage.Present {
		res.usage = ev.Usage
	}
	if ev.Timings != nil {
		// The last one wins (with timings_per_token every chunk has one);
		// decoded once, when the stream has ended (serverTimingsOf).
		res.timings = append(res.timings[:0], ev.Timings...)
	}
	if ev.Done {
		// The terminal event may carry the answer's last parts
		// (Responses' usage in response.completed).
		res.terminal, res.terminalAt = true, ev.At
		return false
	}
	return true
}

// finish records a finish reason: kept (up to maxFinishReasons) for the
// failure metadata, and a failing one (failingFinishReasons) makes the
// response a failure whatever follows, [DONE] included.
func (res *streamResult) finish(reason []byte) {
	if len(res.finishReasons) < maxFinishReasons {
		fr, _ := CutOnRune(string(reason), maxFinishReasonBytes)
		res.finishReasons = append(res.finishReasons, fr)
	}
	if res.invalid == "" && isFailingFinish(reason) {
		res.invalidType = ErrorTypeAborted
		res.invalid = fmt.Sprintf("the server ended the response with finish_reason %q: it aborted or failed the request (vLLM \"abort\", SGLang \"error\"), so the response is not a complete answer",
			Excerpt(string(reason)))
	}
}

// transientString views b as a string without a copy, for a callee that
// only reads it during the call (visibleCapture.Append copies what it
// keeps). b must not change during the call.
func transientString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// BodyEndGrace is how long the client waits for the rest of a response body
// once the request's outcome is known: after the terminal event, or after an error
// status or a wrong Content-Type whose body is quoted in the failure. A
// server normally ends the body at once; one that keeps it open holds the
// request's worker no longer than this, not until Workload.Timeout, and
// the outcome stays what was known.
const BodyEndGrace = 100 * time.Millisecond

// withinBodyEndGrace runs read, which reads the rest of a response body;
// when it has not returned after BodyEndGrace, cancel ends the request,
// which closes the body (and its connection) and so ends read.
func withinBodyEndGrace(cancel context.CancelCauseFunc, read func()) {
	grace := time.AfterFunc(BodyEndGrace, func() { cancel(errBodyEndGrace) })
	defer grace.Stop()
	read()
}

// drainAfterTerminal reads what follows the terminal event (normally
// nothing but the
// end of the chunked body) so the transport can reuse the connection,
// within BodyEndGrace. The request has succeeded at its terminal event
// either way.
func drainAfterTerminal(body *trackedBody, cancel context.CancelCauseFunc) {
	withinBodyEndGrace(cancel, func() { discard(body, maxDrainAfterTerminal) })
}

// discardBuffer is the buffer of discard: the answers it reads are a
// warm-up's list of models or what follows a terminal event, normally a
// few hundred bytes or none.
const discardBuffer = 512

// discard reads r to its end or its first error, at most limit bytes,
// through a buffer of its own of discardBuffer bytes, garbage as soon as
// it returns. (io.Copy into io.Discard takes an 8 KiB buffer of io's
// pool: the thousands of requests that drain at once, the connection
// warm-up's or a run's streams ending together, leave as many in the
// pool, held until two collections have passed.)
func discard(r io.Reader, limit int64) {
	buf := make([]byte, discardBuffer)
	for limit > 0 {
		n, err := r.Read(buf[:min(int64(len(buf)), limit)])
		limit -= int64(n)
		if err != nil {
			return
		}
	}
}

// readExcerpt reads the start of an error answer's body, at most
// MaxErrorExcerpt bytes, within BodyEndGrace.
func readExcerpt(body io.Reader, cancel context.CancelCauseFunc) string {
	var text []byte
	withinBodyEndGrace(cancel, func() {
		text, _ = io.ReadAll(io.LimitReader(body, MaxErrorExcerpt))
	})
	return string(text)
}

// Excerpt bounds a server-provided text quoted in a message (at
// MaxErrorExcerpt bytes, cut on a rune boundary).
func Excerpt(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > MaxErrorExcerpt {
		cut, _ := CutOnRune(s, MaxErrorExcerpt)
		return cut + "..."
	}
	return s
}

// CutOnRune cuts s to at most n bytes on a rune boundary, and reports
// whether it cut.
func CutOnRune(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	i := n
	for i > 0 && !isUTF8Start(s[i]) {
		i--
	}
	return s[:i], true
}

func isUTF8Start(b byte) bool { return b&0xC0 != 0x80 }

package client

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unsafe"

	"github.com/anvilbench/anvil/capacity/internal/chunk"
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

// maxDrainAfterTerminal bounds the bytes read after [DONE] so that the
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

// usageSeen is the last non-null usage object of a stream.
type usageSeen struct {
	present                               bool
	prompt, completion, total, cachedToks wireInt
}

// streamResult is what the client learned from one response stream. Times
// are monotonic stamps; a zero time means "not seen".
type streamResult struct {
	firstEvent   time.Time // first SSE event of any kind
	firstOutput  time.Time // first non-empty reasoning or content delta
	firstContent time.Time // first non-empty content delta
	terminalAt   time.Time // arrival of data: [DONE]
	terminal     bool

	events          int
	contentChunks   int
	reasoningChunks int
	usage           usageSeen
	finishReasons   []string
	capture         visibleCapture

	// invalid names the stream-contract violation; "" when none was seen.
	invalid string
	// invalidType is the error_type of the violation.
	invalidType string
	// readErr is the error that ended the reading (nil at a clean end).
	readErr error
	// trailing counts field bytes after the last complete event at EOF;
	// trailingDone says they were only a "data: [DONE]" line.
	trailing     int64
	trailingDone bool

	// timings is the raw JSON of the last "timings" object of the stream
	// (llama.cpp), nil when none.
	timings []byte

	// gaps, when set, receives the arrival offset from origin of every
	// output event (reasoning or content): the stream's chunk timing.
	gaps   *itl.Stream
	origin time.Time
	// lastCompletion is the last usage.completion_tokens seen (0 before
	// any), from which a chunk's tokens are counted.
	lastCompletion int64
	// usageMissed: a chunk came without usage.
	usageMissed bool
}

// readStream reads SSE events from body (package sse: go-sse's framing,
// without allocating) until [DONE], the end of the body,
// a read error or a contract violation, and records what it saw in res.
// After [DONE] the rest of the body is left to drainAfterTerminal.
// Every event is stamped with the time of the read that completed it, before
// it is decoded.
func readStream(body *trackedBody, res *streamResult) {
	var dec chunkDecoder
	events := sse.NewReader(body, MaxEventSize)
	for events.Scan() {
		ev := events.Event()
		at := body.lastRead // stamp first: the event is complete at this read
		res.events++
		if res.events == 1 {
			res.firstEvent = at
		}
		if res.events > maxStreamEvents {
			res.invalidType = ErrorTypeTooManyEvents
			res.invalid = fmt.Sprintf("more than maxStreamEvents (%d) events: more chunks than any max_tokens allows", maxStreamEvents)
			return
		}
		if string(ev.Type) == sseErrorEvent {
			res.invalidType = ErrorTypeServerError
			res.invalid = "in-stream error event: " + Excerpt(string(ev.Data))
			return
		}
		if len(ev.Data) == 0 {
			continue // a named event without data, e.g. a ping
		}
		if isTerminalBytes(ev.Data) {
			res.terminal, res.terminalAt = true, at
			return
		}
		c, err := dec.decode(ev.Data)
		if err != nil {
			res.invalidType = ErrorTypeMalformedChunk
			res.invalid = fmt.Sprintf("malformed JSON chunk (event %d): %v: %s", res.events, err, Excerpt(string(ev.Data)))
			return
		}
		if c.HasError() {
			res.invalidType = ErrorTypeServerError
			res.invalid = "in-stream error object: " + Excerpt(string(c.Error))
			return
		}
		if c.IsErrorObject() {
			// vLLM and SGLang: {"object":"error","message":...,"type":...}
			// in place of a chunk.
			res.invalidType = ErrorTypeServerError
			if c.Message.NonEmpty() {
				res.invalid = "in-stream error object: " + Excerpt(string(c.Message.Bytes))
			} else {
				res.invalid = "in-stream error object: " + Excerpt(string(ev.Data))
			}
			return
		}
		res.apply(c, ev.Data, at)
	}
	if err := events.Err(); err != nil {
		res.readErr = err
		if errors.Is(err, bufio.ErrTooLong) {
			res.invalidType = ErrorTypeEventTooLarge
			res.invalid = fmt.Sprintf("event larger than MaxEventSize (%d bytes)", MaxEventSize)
		}
		return
	}
	// The body ended (EOF, or the body cut inside a line).
	res.trailing, res.trailingDone = body.trailing(), body.trailingDone()
}

// sseErrorEvent is the event type of an in-stream error event.
const sseErrorEvent = "error"

// apply folds one decoded chunk, decoded from data, into the result. Its
// common path (a content or reasoning delta) allocates nothing.
func (res *streamResult) apply(c *chunk.Chunk, data []byte, at time.Time) {
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
	// With usage on every chunk (vLLM's continuous_usage_stats), the
	// increase of completion_tokens is the chunk's tokens. One chunk
	// without it (usage only at the end, as most servers send it) and
	// the stream's chunks are not counted.
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
		// The last one wins (with timings_per_token every chunk has one);
		// decoded once, when the stream has ended (serverTimingsOf).
		res.timings = append(res.timings[:0], c.Timings...)
	}
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

// terminalData is the data of the event that ends a stream: data: [DONE].
const terminalData = "[DONE]"

// isTerminalData reports whether an event's data is the terminal [DONE]
// (white space around it tolerated).
func isTerminalData(data string) bool { return strings.TrimSpace(data) == terminalData }

// isTerminalBytes is isTerminalData of an event's data as bytes.
func isTerminalBytes(data []byte) bool { return string(bytes.TrimSpace(data)) == terminalData }

// BodyEndGrace is how long the client waits for the rest of a response body
// once the request's outcome is known: after [DONE], or after an error
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

// drainAfterTerminal reads what follows [DONE] (normally nothing but the
// end of the chunked body) so the transport can reuse the connection,
// within BodyEndGrace. The request has succeeded at [DONE] either way.
func drainAfterTerminal(body *trackedBody, cancel context.CancelCauseFunc) {
	withinBodyEndGrace(cancel, func() {
		_, _ = io.Copy(io.Discard, io.LimitReader(body, maxDrainAfterTerminal))
	})
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

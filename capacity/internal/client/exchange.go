package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// An Exchange is one request and its raw outcome: monotonic stamps, the
// response status and what the stream carried, or why it failed. The
// caller sets the request's fields (Index and the others) before Send;
// the methods report what Send learned.
type Exchange struct {
	// Index is the request's index (measured or warm-up), Planned its
	// planned context in tokens (0: none planned, so the prompt-token
	// floor is not checked), MaxTokens the max_tokens it sends (0:
	// Config.Checks.MaxTokens). Unmeasured marks a warm-up or calibration
	// request: the connection rule may send it again even after it was
	// completely written, and Evaluate checks no contract of the prompt.
	Index, Planned, MaxTokens int
	Unmeasured                bool
	// Inputs is the number of inputs an embeddings request sends: the
	// vectors its answer must hold (0: one).
	Inputs int

	start    time.Time // t0, immediately before the request is issued
	endAt    time.Time // end of the stream: its terminal event, the body's end, or the failure
	status   int
	received bool // response headers arrived
	stream   streamResult

	// A failure, when class is not empty.
	class   artifact.FailureClass
	errType string
	message string

	// secrets are scrubbed from the message (Client.Send sets them).
	secrets Secrets

	// The connection of the (last) attempt: when it was obtained (ms after
	// t0), whether it came from the keep-alive pool, and whether the request
	// was sent again (its first attempt in failedAttempt).
	gotConnMS     float64
	reused        bool
	retried       bool
	failedAttempt *failedAttempt
	// The attempt's other phases (ms after t0; nil when not reached): the
	// dial of a fresh connection, the request written, the first response
	// byte.
	connectMS, wroteMS, firstByteMS *float64
	// conn is the connection of the last attempt when it is one of the
	// run's own, whose reads stamp the body's bytes (trackedBody).
	conn *watchedConn
}

// fail records the first failure of the exchange. The whole message is
// scrubbed of the run's credentials here, before anything cuts it, so a
// credential quoted from the server never survives even in part: every
// failure message passes this one point.
func (ex *Exchange) fail(class artifact.FailureClass, errType, format string, args ...any) {
	if ex.class != "" {
		return
	}
	ex.class, ex.errType, ex.message = class, errType, ex.secrets.Scrub(fmt.Sprintf(format, args...))
}

// Start is t0, the instant immediately before the request was issued (zero
// when it never was).
func (ex *Exchange) Start() time.Time { return ex.start }

// End is when the answer ended: its terminal event, the body's end, or
// the failure.
func (ex *Exchange) End() time.Time { return ex.endAt }

// Received reports whether the response headers arrived.
func (ex *Exchange) Received() bool { return ex.received }

// FirstOutput is the arrival of the first reasoning or visible content;
// zero when none came.
func (ex *Exchange) FirstOutput() time.Time { return ex.stream.firstOutput }

// FirstContent is the arrival of the first visible content; zero when
// none came.
func (ex *Exchange) FirstContent() time.Time { return ex.stream.firstContent }

// Failure is the failure class of the request and its message (scrubbed);
// the class is empty while the request has not failed. Evaluate may add
// a failure of the contracts.
func (ex *Exchange) Failure() (artifact.FailureClass, string) { return ex.class, ex.message }

// Answer is the visible content the capture kept and whether some was
// dropped (VisibleCaptureLimit).
func (ex *Exchange) Answer() (content string, truncated bool) {
	return ex.stream.capture.String(), ex.stream.capture.Truncated()
}

// PromptTokens is usage.prompt_tokens when the answer reported it (after
// Evaluate: as the usage check accepted it).
func (ex *Exchange) PromptTokens() (int, bool) {
	u := ex.stream.usage.Prompt
	return int(u.v), u.ok
}

// CompletionTokens and CachedTokens are usage.completion_tokens and
// prompt_tokens_details.cached_tokens as the usage check accepted them;
// nil when not reported.
func (ex *Exchange) CompletionTokens() *int { return wireIntPtr(ex.stream.usage.Completion) }

// CachedTokens is usage.prompt_tokens_details.cached_tokens as the usage
// check accepted it; nil when not reported.
func (ex *Exchange) CachedTokens() *int { return wireIntPtr(ex.stream.usage.Cached) }

// CacheRatio is cached_tokens / prompt_tokens when the answer reported
// both and a positive prompt count; nil otherwise.
func (ex *Exchange) CacheRatio() *float64 {
	u := ex.stream.usage
	if !u.Cached.ok || !u.Prompt.ok || u.Prompt.v <= 0 {
		return nil
	}
	ratio := float64(u.Cached.v) / float64(u.Prompt.v)
	return &ratio
}

// ServerTimings is what the server reported of its own timings
// (llama.cpp's last "timings" object); nil when none.
func (ex *Exchange) ServerTimings() *artifact.ServerTimings {
	return serverTimingsOf(ex.stream.timings)
}

// Send issues one request with body and reads its stream into ex. ctx is
// the run's context: its end makes the request cancelled.
func (c *Client) Send(ctx context.Context, body Body, ex *Exchange) {
	ex.secrets = c.secrets
	reqCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	total := time.AfterFunc(c.timeout, func() { cancel(errTotalTimeout) })
	defer total.Stop()
	var activity func(time.Time)
	if c.stall > 0 {
		stall := startStallWatch(c.stall, cancel)
		defer stall.stop()
		activity = stall.touch
	}

	resp, err := c.roundTrip(reqCtx, body, ex)
	if err != nil {
		ex.endAt = time.Now()
		c.failTransport(ctx, reqCtx, ex, err)
		return
	}
	ex.received, ex.status = true, resp.StatusCode
	if activity != nil {
		activity(time.Now())
	}
	defer resp.Body.Close()

	// A compressed body is decoded as it arrives (content_encoding.go).
	respBody, encErr := DecodeBody(resp)

	media, ok := c.checkHead(resp, respBody, encErr, cancel, ex)
	if !ok {
		return
	}
	tb := newTrackedBody(respBody, activity) // stamps the decoded bytes
	tb.conn = ex.conn
	dec := c.takeDecoder()
	if media == eventStreamType {
		readStream(tb, &ex.stream, dec)
	} else {
		readAnswer(tb, &ex.stream, dec)
	}
	c.giveDecoder(dec) // what the result keeps of the answer is copied
	if ex.stream.terminal {
		drainAfterTerminal(tb, cancel)
	}
	switch {
	case ex.stream.terminal:
		ex.endAt = ex.stream.terminalAt
	case tb.end == bodyEOF:
		ex.endAt = tb.endAt
	default:
		ex.endAt = time.Now()
	}
	c.classifyStream(ctx, reqCtx, ex, tb)
}

// roundTrip sends the request of ex with body under reqCtx, taking t0,
// and records its connection's phases in ex. It is a function of its own
// so that its frame is not on the stack while Send reads the stream.
func (c *Client) roundTrip(reqCtx context.Context, body Body, ex *Exchange) (*http.Response, error) {
	var ct connTrace
	traceCtx := ct.attach(reqCtx, c.underRule)
	if !ex.Unmeasured {
		traceCtx = withMeasured(traceCtx)
	}
	// Before t0: the clock measures the server, not this. One shallow copy
	// of the template: its URL and Header are shared by every request in
	// flight, read-only (neither the client nor net/http writes them:
	// net/http copies a request before it changes one), so a request holds
	// no copy of them.
	traced := c.tmpl.WithContext(traceCtx)
	traced.Body = body.NewReader()
	traced.GetBody = func() (io.ReadCloser, error) { return body.NewReader(), nil }
	traced.ContentLength = body.ContentLength()
	// t0 is taken once: a request sent again under the connection rule
	// (connection_rule.go) keeps it, so no wait is ever hidden.
	ex.start = time.Now()
	ct.start = ex.start
	resp, err := c.hc.Do(traced)
	ct.record(ex)
	return resp, err
}

// checkHead judges the response head resp of ex, whose body decodes as
// respBody (encErr: it does not): its media type, the stream's or the
// answer's, or false with ex failed when its status, Content-Encoding or
// Content-Type says the body is no answer. It is a function of its own so
// that its frame is not on the stack while Send reads the stream.
func (c *Client) checkHead(resp *http.Response, respBody io.Reader, encErr error, cancel context.CancelCauseFunc, ex *Exchange) (string, bool) {
	// With an error status or a wrong Content-Type the outcome is known
	// from the headers; the body is only quoted, whatever ends its reading.
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		text := "(body in an undecodable Content-Encoding not shown)"
		if encErr == nil {
			text = Excerpt(readExcerpt(respBody, cancel))
		}
		ex.endAt = time.Now()
		refusal, overWindow := parseWindowRefusal(text)
		switch {
		case resp.StatusCode >= 400 && overWindow:
			ex.fail(artifact.FailureHTTPError, ErrorTypeContextWindow, "HTTP %s: the server refused the prompt as longer than its context window: %d prompt tokens for a window of %d tokens (its own counts, n_prompt_tokens and n_ctx; llama.cpp's n_ctx is one slot's: --parallel splits --ctx-size among the slots): %s",
				resp.Status, refusal.PromptTokens, refusal.Window, text)
		case resp.StatusCode >= 400:
			ex.fail(artifact.FailureHTTPError, ErrorTypeHTTPStatus, "HTTP %s: %s", resp.Status, text)
		case resp.Header.Get("Location") != "":
			ex.fail(artifact.FailureStreamValidation, ErrorTypeHTTPStatus, "unexpected HTTP status %s for a streamed request: redirected to %s (not followed; set Target.BaseURL to the final URL): %s",
				resp.Status, Excerpt(redactedLocation(resp.Header.Get("Location"))), text)
		default:
			ex.fail(artifact.FailureStreamValidation, ErrorTypeHTTPStatus, "unexpected HTTP status %s for a streamed request: %s", resp.Status, text)
		}
		return "", false
	}
	if encErr != nil {
		ex.endAt = time.Now()
		ex.fail(artifact.FailureStreamValidation, ErrorTypeContentEncoding, "%v", encErr)
		return "", false
	}
	media := eventStreamType
	if !c.dialect.Streams() {
		media = jsonType
	}
	if ct := resp.Header.Get("Content-Type"); !isMediaType(ct, media) {
		text := Excerpt(readExcerpt(respBody, cancel))
		ex.endAt = time.Now()
		ex.fail(artifact.FailureStreamValidation, ErrorTypeContentType, "Content-Type %q is not %s: %s", ct, media, text)
		return "", false
	}
	return media, true
}

// classifyStream turns how the stream ended into a failure, if it is one.
// Contract violations seen in the data come first; then limits and
// cancellation; then a connection drop or a cut final event. A stream that
// delivered its terminal event has ended whatever happened while draining
// it.
func (c *Client) classifyStream(ctx, reqCtx context.Context, ex *Exchange, tb *trackedBody) {
	s := &ex.stream
	if s.invalid != "" {
		ex.fail(cmp.Or(s.invalidClass, artifact.FailureStreamValidation), s.invalidType, "%s", s.invalid)
		return
	}
	if s.terminal {
		return
	}
	if tb.end == bodyError || s.readErr != nil {
		if c.interrupted(ctx, reqCtx, ex) {
			return
		}
		err := tb.err
		if err == nil {
			err = s.readErr
		}
		if de := (*decodingError)(nil); errors.As(err, &de) {
			ex.fail(artifact.FailureStreamValidation, ErrorTypeContentEncoding, "Content-Encoding %s: the stream does not decode after %d decoded bytes: %v", de.encoding, tb.bytes, de.err)
			return
		}
		ex.fail(artifact.FailureStreamValidation, dropType(err), "connection dropped mid-stream (%s) after %d bytes: %v", dropKind(err), tb.bytes, errText(err))
		return
	}
	if s.trailing > 0 && !s.trailingDone {
		// The final event was cut: part of the response is lost. (A lone
		// terminal data line without its blank line, "data: [DONE]",
		// loses nothing: the stream is then one without its terminal
		// event.)
		ex.fail(artifact.FailureStreamValidation, ErrorTypeTruncatedEvent, "stream ended inside an event: %d bytes after the last complete event", s.trailing)
	}
}

// interrupted records a timeout or a cancellation when one ended the
// request, and reports whether it did.
func (c *Client) interrupted(ctx, reqCtx context.Context, ex *Exchange) bool {
	switch context.Cause(reqCtx) {
	case errTotalTimeout:
		if !ex.received {
			ex.fail(artifact.FailureTimeout, ErrorTypeTimeout, "no response headers within Workload.Timeout (%v)", c.timeout)
		} else {
			ex.fail(artifact.FailureTimeout, ErrorTypeTimeout, "request exceeded Workload.Timeout (%v)", c.timeout)
		}
		return true
	case errStallTimeout:
		if !ex.received {
			ex.fail(artifact.FailureTimeout, ErrorTypeStall, "no response headers within Workload.StallTimeout (%v)", c.stall)
		} else {
			ex.fail(artifact.FailureTimeout, ErrorTypeStall, "stream idle longer than Workload.StallTimeout (%v)", c.stall)
		}
		return true
	}
	if ctx.Err() != nil {
		ex.fail(artifact.FailureCancelled, ErrorTypeCancelled, "run cancelled before the request finished: %v", context.Cause(ctx))
		return true
	}
	return false
}

// failTransport classifies an error of http.Client.Do.
func (c *Client) failTransport(ctx, reqCtx context.Context, ex *Exchange, err error) {
	if c.interrupted(ctx, reqCtx, ex) {
		return
	}
	inner := UnwrapURLError(err)
	if ka := (*keptAliveClosedError)(nil); errors.As(inner, &ka) {
		more := ""
		if r := c.Rule(); r != nil && r.ReuseDisabled() {
			more = "; the server closes kept-alive connections, so from now on no connection is reused (each request dials inside its timings)"
		}
		ex.fail(artifact.FailureRequestError, transportErrorType(ka.Err), "POST %s after %.0f ms: %v%s", RedactedURL(c.tmpl.URL), MS(ex.endAt.Sub(ex.start)), errText(ka), more)
		return
	}
	ex.fail(artifact.FailureRequestError, transportErrorType(inner), "POST %s: %v%s", RedactedURL(c.tmpl.URL), errText(inner), TransportHint(c.tmpl.URL, baseTransport(c.hc.Transport), inner))
}

// errText is an error's text for a failure message (which fail scrubs).
func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// dropType is the error_type of a connection dropped mid-stream: eof for
// a body cut short, else the transport's cause.
func dropType(err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return ErrorTypeEOF
	}
	if t := transportErrorType(err); t != ErrorTypeNetwork {
		return t
	}
	return ErrorTypeConnectionReset
}

// dropKind names how a stream read failed.
func dropKind(err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected EOF"
	}
	return "read error"
}

// The media types of an answer: a streamed one's (and the Accept header
// of a streamed request), and one JSON body's.
const (
	eventStreamType = "text/event-stream"
	jsonType        = "application/json"
)

// isMediaType reports whether a Content-Type is the media type want.
func isMediaType(ct, want string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == want
}

// UnwrapURLError drops the *url.Error layer, whose message repeats the URL.
func UnwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// redactedLocation prints a redirect's Location as a base URL is recorded:
// without userinfo, query or fragment (a Location that does not parse is
// not shown).
func redactedLocation(loc string) string {
	u, err := url.Parse(loc)
	if err != nil {
		return "(unparsable Location)"
	}
	return RedactedURL(u)
}

// RedactedURL prints u without userinfo, query or fragment.
func RedactedURL(u *url.URL) string {
	r := *u
	r.User, r.RawQuery, r.ForceQuery, r.Fragment, r.RawFragment = nil, "", false, "", ""
	return r.String()
}

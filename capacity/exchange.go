package capacity

import (
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

// client sends the chat-completions requests of one run. It is safe for
// concurrent use; per-request state lives in an exchange.
type client struct {
	hc      *http.Client
	tmpl    *http.Request // method, URL and headers of every request
	enc     *requestEncoder
	timeout time.Duration
	stall   time.Duration // 0: no stall limit below timeout
	secrets secrets       // scrubbed from every message (exchange.fail)

	modelsURL string // GET {BaseURL}/models: the connection warm-up's request
}

// newClient prepares the requests of a run against a resolved target.
func newClient(t Target, w Workload, hc *http.Client, apiKey string) (*client, error) {
	enc, err := newRequestEncoder(t, w)
	if err != nil {
		return nil, err
	}
	tmpl, err := http.NewRequest(http.MethodPost, t.ChatCompletionsURL(), nil)
	if err != nil {
		return nil, fmt.Errorf("capacity: Target.BaseURL: %w", unwrapURLError(err))
	}
	for k, vs := range t.Headers {
		for _, v := range vs {
			tmpl.Header.Add(k, v)
		}
	}
	tmpl.Header.Set("Content-Type", "application/json")
	tmpl.Header.Set("Accept", eventStreamType)
	if tmpl.Header.Get("Accept-Encoding") == "" {
		// An uncompressed stream: a compressor on the server buffers events,
		// which would delay their arrival stamps (Go's transport otherwise
		// asks for gzip on its own). Target.Headers may still ask for one.
		tmpl.Header.Set("Accept-Encoding", "identity")
	}
	if apiKey != "" {
		tmpl.Header.Set("Authorization", "Bearer "+apiKey)
	}
	c := &client{hc: hc, tmpl: tmpl, enc: enc, timeout: w.Timeout, secrets: secretsOf(t, apiKey), modelsURL: t.ModelsURL()}
	if w.StallTimeout > 0 && w.StallTimeout < w.Timeout {
		c.stall = w.StallTimeout
	}
	return c, nil
}

// exchange is the raw outcome of one request: monotonic stamps, the
// response status and what the stream carried, or why it failed.
type exchange struct {
	start    time.Time // t0, immediately before the request is issued
	endAt    time.Time // end of the stream: [DONE], the body's end, or the failure
	status   int
	received bool // response headers arrived
	stream   streamResult

	// A failure, when class is not empty.
	class   artifact.FailureClass
	errType string
	message string

	// secrets are scrubbed from the message (client.send sets them).
	secrets secrets

	// unmeasured: the request is a warm-up or calibration request, which
	// the connection rule may send again even after it was completely
	// written (the caller sets it before send).
	unmeasured bool

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
}

// fail records the first failure of the exchange. The whole message is
// scrubbed of the run's credentials here, before anything cuts it, so a
// credential quoted from the server never survives even in part: every
// failure message passes this one point.
func (ex *exchange) fail(class artifact.FailureClass, errType, format string, args ...any) {
	if ex.class != "" {
		return
	}
	ex.class, ex.errType, ex.message = class, errType, ex.secrets.scrub(fmt.Sprintf(format, args...))
}

// send issues one request with body and reads its stream into ex. ctx is the
// run's context: its end makes the request cancelled.
func (c *client) send(ctx context.Context, body requestBody, ex *exchange) {
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

	req := c.tmpl.Clone(reqCtx)
	req.Body = body.newReader()
	req.GetBody = func() (io.ReadCloser, error) { return body.newReader(), nil }
	req.ContentLength = body.contentLength()

	var ct connTrace
	traceCtx := ct.attach(reqCtx)
	if !ex.unmeasured {
		traceCtx = withMeasured(traceCtx)
	}
	traced := req.WithContext(traceCtx) // before t0: the clock measures the server, not this
	// t0 is taken once: a request sent again under the connection rule
	// (connection_rule.go) keeps it, so no wait is ever hidden.
	ex.start = time.Now()
	ct.start = ex.start
	resp, err := c.hc.Do(traced)
	ct.record(ex)
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
	respBody, encErr := decodeBody(resp)

	// With an error status or a wrong Content-Type the outcome is known
	// from the headers; the body is only quoted, whatever ends its reading.
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		text := "(body in an undecodable Content-Encoding not shown)"
		if encErr == nil {
			text = serverExcerpt(readExcerpt(respBody, cancel))
		}
		ex.endAt = time.Now()
		refusal, overWindow := parseWindowRefusal(text)
		switch {
		case resp.StatusCode >= 400 && overWindow:
			ex.fail(artifact.FailureHTTPError, errorTypeContextWindow, "HTTP %s: the server refused the prompt as longer than its context window: %d prompt tokens for a window of %d tokens (its own counts, n_prompt_tokens and n_ctx; llama.cpp's n_ctx is one slot's: --parallel splits --ctx-size among the slots): %s",
				resp.Status, refusal.promptTokens, refusal.window, text)
		case resp.StatusCode >= 400:
			ex.fail(artifact.FailureHTTPError, errorTypeHTTPStatus, "HTTP %s: %s", resp.Status, text)
		case resp.Header.Get("Location") != "":
			ex.fail(artifact.FailureStreamValidation, errorTypeHTTPStatus, "unexpected HTTP status %s for a streamed request: redirected to %s (not followed; set Target.BaseURL to the final URL): %s",
				resp.Status, serverExcerpt(redactedLocation(resp.Header.Get("Location"))), text)
		default:
			ex.fail(artifact.FailureStreamValidation, errorTypeHTTPStatus, "unexpected HTTP status %s for a streamed request: %s", resp.Status, text)
		}
		return
	}
	if encErr != nil {
		ex.endAt = time.Now()
		ex.fail(artifact.FailureStreamValidation, errorTypeContentEncoding, "%v", encErr)
		return
	}
	if ct := resp.Header.Get("Content-Type"); !isEventStream(ct) {
		text := serverExcerpt(readExcerpt(respBody, cancel))
		ex.endAt = time.Now()
		ex.fail(artifact.FailureStreamValidation, errorTypeContentType, "Content-Type %q is not %s: %s", ct, eventStreamType, text)
		return
	}

	tb := newTrackedBody(respBody, activity) // stamps the decoded bytes
	readStream(tb, &ex.stream)
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

// classifyStream turns how the stream ended into a failure, if it is one.
// Contract violations seen in the data come first; then limits and
// cancellation; then a connection drop or a cut final event. A stream that
// delivered [DONE] has ended whatever happened while draining it.
func (c *client) classifyStream(ctx, reqCtx context.Context, ex *exchange, tb *trackedBody) {
	s := &ex.stream
	if s.invalid != "" {
		ex.fail(artifact.FailureStreamValidation, s.invalidType, "%s", s.invalid)
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
			ex.fail(artifact.FailureStreamValidation, errorTypeContentEncoding, "Content-Encoding %s: the stream does not decode after %d decoded bytes: %v", de.encoding, tb.bytes, de.err)
			return
		}
		ex.fail(artifact.FailureStreamValidation, dropType(err), "connection dropped mid-stream (%s) after %d bytes: %v", dropKind(err), tb.bytes, errText(err))
		return
	}
	if s.trailing > 0 && !s.trailingDone {
		// The final event was cut: part of the response is lost. (A lone
		// "data: [DONE]" without its blank line loses nothing: the stream
		// is then a stream without [DONE].)
		ex.fail(artifact.FailureStreamValidation, errorTypeTruncatedEvent, "stream ended inside an event: %d bytes after the last complete event", s.trailing)
	}
}

// interrupted records a timeout or a cancellation when one ended the
// request, and reports whether it did.
func (c *client) interrupted(ctx, reqCtx context.Context, ex *exchange) bool {
	switch context.Cause(reqCtx) {
	case errTotalTimeout:
		if !ex.received {
			ex.fail(artifact.FailureTimeout, errorTypeTimeout, "no response headers within Workload.Timeout (%v)", c.timeout)
		} else {
			ex.fail(artifact.FailureTimeout, errorTypeTimeout, "request exceeded Workload.Timeout (%v)", c.timeout)
		}
		return true
	case errStallTimeout:
		if !ex.received {
			ex.fail(artifact.FailureTimeout, errorTypeStall, "no response headers within Workload.StallTimeout (%v)", c.stall)
		} else {
			ex.fail(artifact.FailureTimeout, errorTypeStall, "stream idle longer than Workload.StallTimeout (%v)", c.stall)
		}
		return true
	}
	if ctx.Err() != nil {
		ex.fail(artifact.FailureCancelled, errorTypeCancelled, "run cancelled before the request finished: %v", context.Cause(ctx))
		return true
	}
	return false
}

// failTransport classifies an error of http.Client.Do.
func (c *client) failTransport(ctx, reqCtx context.Context, ex *exchange, err error) {
	if c.interrupted(ctx, reqCtx, ex) {
		return
	}
	inner := unwrapURLError(err)
	if ka := (*keptAliveClosedError)(nil); errors.As(inner, &ka) {
		more := ""
		if r := c.rule(); r != nil && r.ReuseDisabled() {
			more = "; the server closes kept-alive connections, so from now on no connection is reused (each request dials inside its timings)"
		}
		ex.fail(artifact.FailureRequestError, transportErrorType(ka.Err), "POST %s after %.0f ms: %v%s", redactedURL(c.tmpl.URL), monoMS(ex.endAt.Sub(ex.start)), errText(ka), more)
		return
	}
	ex.fail(artifact.FailureRequestError, transportErrorType(inner), "POST %s: %v%s", redactedURL(c.tmpl.URL), errText(inner), transportHint(c.tmpl.URL, baseTransport(c.hc.Transport), inner))
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
		return errorTypeEOF
	}
	if t := transportErrorType(err); t != errorTypeNetwork {
		return t
	}
	return errorTypeConnectionReset
}

// dropKind names how a stream read failed.
func dropKind(err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected EOF"
	}
	return "read error"
}

// eventStreamType is the media type of a streamed response (and of the
// Accept header of every request).
const eventStreamType = "text/event-stream"

// isEventStream reports whether a Content-Type is text/event-stream.
func isEventStream(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == eventStreamType
}

// unwrapURLError drops the *url.Error layer, whose message repeats the URL.
func unwrapURLError(err error) error {
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
	return redactedURL(u)
}

// redactedURL prints u without userinfo, query or fragment.
func redactedURL(u *url.URL) string {
	r := *u
	r.User, r.RawQuery, r.ForceQuery, r.Fragment, r.RawFragment = nil, "", false, "", ""
	return r.String()
}

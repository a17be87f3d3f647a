package capacity

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"syscall"
)

// The values of a failure row's "error_type": what a user can act on, one
// short word per cause, never a Go type name. Each failure class uses the
// subset listed in capacity/PROTOCOL.md#failure-classes; this is the only
// place the words are defined.
const (
	// errorTypeConnectionRefused: nothing listens at the address.
	errorTypeConnectionRefused = "connection_refused"
	// errorTypeConnectionReset: the peer reset or broke the connection.
	errorTypeConnectionReset = "connection_reset"
	// errorTypeEOF: the connection closed before the response (or, mid-stream,
	// inside the body).
	errorTypeEOF = "eof"
	// errorTypeDNS: the host name does not resolve.
	errorTypeDNS = "dns"
	// errorTypeTLS: the TLS handshake or certificate check failed.
	errorTypeTLS = "tls"
	// errorTypeTimeout: a limit ran out (Workload.Timeout, or a dial or
	// handshake timeout of the transport).
	errorTypeTimeout = "timeout"
	// errorTypeStall: the stream was idle longer than Workload.StallTimeout.
	errorTypeStall = "stall"
	// errorTypeNetwork: any other transport error.
	errorTypeNetwork = "network"
	// errorTypeHTTPStatus: an HTTP status that is not a stream (>= 400 for
	// http_error; 1xx or 3xx for stream_validation_failed).
	errorTypeHTTPStatus = "http_status"
	// errorTypeCancelled: the run was cancelled.
	errorTypeCancelled = "cancelled"
	// errorTypeContentType: the response is not text/event-stream.
	errorTypeContentType = "content_type"
	// errorTypeContentEncoding: a Content-Encoding the client cannot decode.
	errorTypeContentEncoding = "content_encoding"
	// errorTypeEventTooLarge: an event above MaxEventSize.
	errorTypeEventTooLarge = "event_too_large"
	// errorTypeTooManyEvents: more than maxStreamEvents events.
	errorTypeTooManyEvents = "too_many_events"
	// errorTypeMalformedChunk: event data that is not one JSON object.
	errorTypeMalformedChunk = "malformed_chunk"
	// errorTypeServerError: an error event or error object in the stream.
	errorTypeServerError = "server_error"
	// errorTypeAborted: the stream ended with finish_reason "abort" or
	// "error": the server gave up on the request.
	errorTypeAborted = "aborted"
	// errorTypeContextWindow: the server refused the request as longer
	// than its context window, naming the counts (llama.cpp's
	// exceed_context_size_error).
	errorTypeContextWindow = "context_window"
	// errorTypeTruncatedEvent: the body ended inside an event.
	errorTypeTruncatedEvent = "truncated_event"
	// errorTypeNoVisibleContent: the stream carried no visible content.
	errorTypeNoVisibleContent = "no_visible_content"
	// errorTypeInvalidTiming: not 0 <= TTFO <= TTFT <= E2E.
	errorTypeInvalidTiming = "invalid_timing"
	// errorTypePromptTruncated: usage shows the server cut the prompt.
	errorTypePromptTruncated = "prompt_truncated"
	// errorTypeInvalidUsage: a usage count that is negative, not an
	// integer, or impossible for the request.
	errorTypeInvalidUsage = "invalid_usage"
	// errorTypeCanary: the request canary check failed.
	errorTypeCanary = "canary"
	// errorTypeControlledOutput: the strict controlled-output check failed.
	errorTypeControlledOutput = "controlled_output"
	// errorTypePanic: a panic in the benchmark's request worker.
	errorTypePanic = "panic"
)

// transportErrorType names the cause of a transport error (a dial, write or
// read failure) for error_type; errorTypeNetwork when none is recognized.
func transportErrorType(err error) string {
	var (
		dnsErr   *net.DNSError
		recErr   tls.RecordHeaderError
		alertErr tls.AlertError
		certErr  *tls.CertificateVerificationError
		authErr  x509.UnknownAuthorityError
		hostErr  x509.HostnameError
		invErr   x509.CertificateInvalidError
		netErr   net.Error
	)
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return errorTypeConnectionRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNABORTED):
		return errorTypeConnectionReset
	case errors.As(err, &dnsErr):
		return errorTypeDNS
	case errors.As(err, &recErr), errors.As(err, &alertErr), errors.As(err, &certErr),
		errors.As(err, &authErr), errors.As(err, &hostErr), errors.As(err, &invErr):
		return errorTypeTLS
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return errorTypeEOF
	case errors.As(err, &netErr) && netErr.Timeout():
		return errorTypeTimeout
	}
	return errorTypeNetwork
}

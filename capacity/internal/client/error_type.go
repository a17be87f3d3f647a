package client

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// The values of a failure row's "error_type": what a user can act on, one
// short word per cause, never a Go type name. Each failure class uses the
// subset listed in capacity/PROTOCOL.md#failure-classes; this is the only
// place the words are defined (package capacity's runner writes the last
// two).
const (
	// ErrorTypeConnectionRefused: nothing listens at the address.
	ErrorTypeConnectionRefused = "connection_refused"
	// ErrorTypeConnectionReset: the peer reset or broke the connection.
	ErrorTypeConnectionReset = "connection_reset"
	// ErrorTypeEOF: the connection closed before the response (or, mid-stream,
	// inside the body).
	ErrorTypeEOF = "eof"
	// ErrorTypeDNS: the host name does not resolve.
	ErrorTypeDNS = "dns"
	// ErrorTypeTLS: the TLS handshake or certificate check failed.
	ErrorTypeTLS = "tls"
	// ErrorTypeTimeout: a limit ran out (Workload.Timeout, or a dial or
	// handshake timeout of the transport).
	ErrorTypeTimeout = "timeout"
	// ErrorTypeStall: the stream was idle longer than Workload.StallTimeout.
	ErrorTypeStall = "stall"
	// ErrorTypeNetwork: any other transport error.
	ErrorTypeNetwork = "network"
	// ErrorTypeHTTPStatus: an HTTP status that is not a stream (>= 400 for
	// http_error; 1xx or 3xx for stream_validation_failed).
	ErrorTypeHTTPStatus = "http_status"
	// ErrorTypeCancelled: the run was cancelled.
	ErrorTypeCancelled = "cancelled"
	// ErrorTypeContentType: the response is not text/event-stream.
	ErrorTypeContentType = "content_type"
	// ErrorTypeContentEncoding: a Content-Encoding the client cannot decode.
	ErrorTypeContentEncoding = "content_encoding"
	// ErrorTypeEventTooLarge: an event above MaxEventSize.
	ErrorTypeEventTooLarge = "event_too_large"
	// ErrorTypeTooManyEvents: more than maxStreamEvents events.
	ErrorTypeTooManyEvents = "too_many_events"
	// ErrorTypeMalformedChunk: event data that is not one JSON object.
	ErrorTypeMalformedChunk = "malformed_chunk"
	// ErrorTypeServerError: an error event or error object in the stream.
	ErrorTypeServerError = "server_error"
	// ErrorTypeAborted: the stream ended with finish_reason "abort" or
	// "error": the server gave up on the request.
	ErrorTypeAborted = "aborted"
	// ErrorTypeContextWindow: the server refused the request as longer
	// than its context window, naming the counts (llama.cpp's
	// exceed_context_size_error).
	ErrorTypeContextWindow = "context_window"
	// ErrorTypeTruncatedEvent: the body ended inside an event.
	ErrorTypeTruncatedEvent = "truncated_event"
	// ErrorTypeNoVisibleContent: the stream carried no visible content.
	ErrorTypeNoVisibleContent = "no_visible_content"
	// ErrorTypeInvalidTiming: not 0 <= TTFO <= TTFT <= E2E.
	ErrorTypeInvalidTiming = "invalid_timing"
	// ErrorTypePromptTruncated: usage shows the server cut the prompt.
	ErrorTypePromptTruncated = "prompt_truncated"
	// ErrorTypeInvalidUsage: a usage count that is negative, not an
	// integer, or impossible for the request.
	ErrorTypeInvalidUsage = artifact.ErrorTypeInvalidUsage
	// ErrorTypeVectorCount: an embeddings answer with another number of
	// vectors than the request's inputs.
	ErrorTypeVectorCount = "vector_count"
	// ErrorTypeVectorDimension: an embeddings answer whose vectors differ in
	// length from each other, or from the run's earlier answers.
	ErrorTypeVectorDimension = "vector_dimension"
	// ErrorTypeVectorValue: a vector value that is not a finite number
	// (null, a NaN, an infinity, a string), an empty vector, or base64
	// that does not decode to float32 values.
	ErrorTypeVectorValue = "vector_value"
	// ErrorTypeVectorIndex: a vector's index that is not an input's, or an
	// input's twice.
	ErrorTypeVectorIndex = "vector_index"
	// ErrorTypeCanary: the request canary check failed.
	ErrorTypeCanary = "canary"
	// ErrorTypeControlledOutput: the strict controlled-output check failed.
	ErrorTypeControlledOutput = "controlled_output"
	// ErrorTypePanic: a panic in the benchmark's request worker.
	ErrorTypePanic = "panic"
	// ErrorTypeSourceRequest: a request a Workload.Source described could
	// not be built (a reserved body field, a prompt that does not fit): it
	// was never sent.
	ErrorTypeSourceRequest = "source_request"
	// ErrorTypeOverWindow: a request a Workload.Source planned at or above
	// the window the server serves (a trace row longer than any prompt it
	// takes): refused before its body was built, it was never sent.
	ErrorTypeOverWindow = "over_window"
)

// transportErrorType names the cause of a transport error (a dial, write or
// read failure) for error_type; ErrorTypeNetwork when none is recognized.
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
		return ErrorTypeConnectionRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNABORTED):
		return ErrorTypeConnectionReset
	case errors.As(err, &dnsErr):
		return ErrorTypeDNS
	case errors.As(err, &recErr), errors.As(err, &alertErr), errors.As(err, &certErr),
		errors.As(err, &authErr), errors.As(err, &hostErr), errors.As(err, &invErr):
		return ErrorTypeTLS
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return ErrorTypeEOF
	case errors.As(err, &netErr) && netErr.Timeout():
		return ErrorTypeTimeout
	}
	return ErrorTypeNetwork
}

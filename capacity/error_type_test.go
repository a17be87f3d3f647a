package capacity

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// timeoutErr is a net.Error that timed out, as a dial timeout is.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// TestTransportErrorType maps every transport cause to its error_type,
// wrapped as net/http wraps them.
func TestTransportErrorType(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, errorTypeConnectionRefused},
		{&net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, errorTypeConnectionReset},
		{&net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.EPIPE)}, errorTypeConnectionReset},
		{fmt.Errorf("net/http: %w", io.EOF), errorTypeEOF},
		{io.ErrUnexpectedEOF, errorTypeEOF},
		{&net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "nope.invalid", IsNotFound: true}}, errorTypeDNS},
		{x509.UnknownAuthorityError{}, errorTypeTLS},
		{fmt.Errorf("handshake: %w", x509.HostnameError{Host: "h"}), errorTypeTLS},
		{&net.OpError{Op: "dial", Net: "tcp", Err: timeoutErr{}}, errorTypeTimeout},
		{errors.New("something else"), errorTypeNetwork},
	}
	for _, tt := range tests {
		t.Run(tt.want+"/"+tt.err.Error(), func(t *testing.T) {
			require.Equal(t, tt.want, transportErrorType(tt.err))
		})
	}
}

// TestRunRequestErrorTypesLoopback: real loopback failures record what a
// user can act on, never a Go type name.
func TestRunRequestErrorTypesLoopback(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closedAddr := ln.Addr().String()
	require.NoError(t, ln.Close())

	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(tlsSrv.Close)

	reset := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // unread bytes would make the close a reset
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			_ = conn.Close() // closed before any response byte
		}
	}))
	t.Cleanup(reset.Close)

	tests := []struct {
		name, base, want string
	}{
		{"refused", "http://" + closedAddr + "/v1", errorTypeConnectionRefused},
		{"tls", tlsSrv.URL + "/v1", errorTypeTLS},
		{"closed before the response", reset.URL + "/v1", errorTypeEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Run(context.Background(), Target{BaseURL: tt.base, Model: "m", MaxModelLen: 8192},
				Workload{Requests: 1, Concurrency: 1, ContextTokens: 512})
			require.NoError(t, err)
			require.Len(t, rep.Failures, 1)
			f := rep.Failures[0]
			require.Equal(t, artifact.FailureRequestError, f.FailureClass)
			require.Equal(t, tt.want, f.ErrorType, "message: %s", f.ErrorMessage)
		})
	}
}

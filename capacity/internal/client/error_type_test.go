package client

import (
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// timeoutErr is a net.Error that timed out, as a dial timeout is.
type timeoutErr struct{}

func (timeoutErr) Error() string { return "i/o timeout" }

func (timeoutErr) Timeout() bool { return true }

func (timeoutErr) Temporary() bool { return true }

// TestTransportErrorType maps every transport cause to its error_type,
// wrapped as net/http wraps them.
func TestTransportErrorType(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, ErrorTypeConnectionRefused},
		{&net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, ErrorTypeConnectionReset},
		{&net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.EPIPE)}, ErrorTypeConnectionReset},
		{fmt.Errorf("net/http: %w", io.EOF), ErrorTypeEOF},
		{io.ErrUnexpectedEOF, ErrorTypeEOF},
		{&net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "nope.invalid", IsNotFound: true}}, ErrorTypeDNS},
		{x509.UnknownAuthorityError{}, ErrorTypeTLS},
		{fmt.Errorf("handshake: %w", x509.HostnameError{Host: "h"}), ErrorTypeTLS},
		{&net.OpError{Op: "dial", Net: "tcp", Err: timeoutErr{}}, ErrorTypeTimeout},
		{errors.New("something else"), ErrorTypeNetwork},
	}
	for _, tt := range tests {
		t.Run(tt.want+"/"+tt.err.Error(), func(t *testing.T) {
			require.Equal(t, tt.want, transportErrorType(tt.err))
		})
	}
}

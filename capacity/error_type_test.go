package capacity

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
)

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
		{"refused", "http://" + closedAddr + "/v1", client.ErrorTypeConnectionRefused},
		{"tls", tlsSrv.URL + "/v1", client.ErrorTypeTLS},
		{"closed before the response", reset.URL + "/v1", client.ErrorTypeEOF},
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

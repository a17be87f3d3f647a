package capacity

import (
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// okChat answers every chat request with writeOKStream.
func okChat() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		wiretest.WriteOKStream(w, body)
	})
}

// h2cOnly returns unencrypted HTTP/2 (prior knowledge) as the only protocol.
func h2cOnly() *http.Protocols {
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	return p
}

// TestHTTP2OnlyEndpoint: a server that speaks only HTTP/2 without TLS
// resets (or answers with a frame) every HTTP/1.1 request; each failure
// says an HTTP/1.1 response was expected and how to reach such an
// endpoint, and a Target.HTTPClient with unencrypted HTTP/2 reaches it.
func TestHTTP2OnlyEndpoint(t *testing.T) {
	srv := httptest.NewUnstartedServer(okChat())
	srv.Config.Protocols = h2cOnly()
	srv.Start()
	defer srv.Close()
	tg := Target{BaseURL: srv.URL + "/v1", Model: "m", MaxModelLen: 8192}
	w := Workload{Requests: 3, Concurrency: 1, ContextTokens: 512}

	rep, err := Run(t.Context(), tg, w)
	require.NoError(t, err)
	require.Len(t, rep.Failures, 3)
	for _, f := range rep.Failures {
		require.Contains(t, f.ErrorMessage, "want an HTTP/1.1 response")
		require.Contains(t, f.ErrorMessage, "HTTP/2 without TLS (h2c)")
		require.Contains(t, f.ErrorMessage, "go doc github.com/anvilbench/anvil/anviltest: TLS and HTTP/2-only endpoints")
	}

	tg.HTTPClient = &http.Client{Transport: &http.Transport{Protocols: h2cOnly()}}
	rep, err = Run(t.Context(), tg, w)
	require.NoError(t, err)
	require.Empty(t, rep.Failures)
	require.Equal(t, 3, rep.Completed)
}

func TestH2CHintOnlyWhereItApplies(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		require.NoError(t, err)
		conn.Close() // an HTTP/1.1 server that drops the request
	}))
	defer srv.Close()
	rep, err := Run(t.Context(), Target{BaseURL: srv.URL + "/v1", Model: "m", MaxModelLen: 8192,
		HTTPClient: &http.Client{Transport: &http.Transport{Protocols: h2cOnly()}}}, Workload{Requests: 1, Concurrency: 1, ContextTokens: 512})
	require.NoError(t, err)
	require.Len(t, rep.Failures, 1)
	require.NotContains(t, rep.Failures[0].ErrorMessage, "h2c", "the client already speaks h2c")
}

// TestSelfSignedTLSEndpoint: a certificate of no trusted CA fails each
// request with a message naming SSL_CERT_FILE and Target.HTTPClient; a
// client that trusts it (here the test server's own) succeeds.
func TestSelfSignedTLSEndpoint(t *testing.T) {
	srv := httptest.NewUnstartedServer(okChat())
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	srv.StartTLS()
	defer srv.Close()
	tg := Target{BaseURL: srv.URL + "/v1", Model: "m", MaxModelLen: 8192}
	w := Workload{Requests: 2, Concurrency: 1, ContextTokens: 512}

	rep, err := Run(t.Context(), tg, w)
	require.NoError(t, err)
	require.Len(t, rep.Failures, 2)
	require.Contains(t, rep.Failures[0].ErrorMessage, "signed by no CA this machine trusts")
	require.Contains(t, rep.Failures[0].ErrorMessage, "set SSL_CERT_FILE")
	require.Contains(t, rep.Failures[0].ErrorMessage, "Target.HTTPClient")

	tg.HTTPClient = srv.Client()
	rep, err = Run(t.Context(), tg, w)
	require.NoError(t, err)
	require.Empty(t, rep.Failures)
	require.Equal(t, 2, rep.Completed)
}

// sslChildEnv carries the URL of the TLS server to the child of
// TestSSLCertFile.
const sslChildEnv = "ANVIL_TEST_TLS_URL"

// TestSSLCertFile: with SSL_CERT_FILE naming the PEM of a self-signed
// endpoint's certificate, the default client trusts it (the variable is
// read once per process, so the run is a child process of the test).
func TestSSLCertFile(t *testing.T) {
	if url := os.Getenv(sslChildEnv); url != "" {
		rep, err := Run(t.Context(), Target{BaseURL: url + "/v1", Model: "m", MaxModelLen: 8192},
			Workload{Requests: 2, Concurrency: 1, ContextTokens: 512})
		require.NoError(t, err)
		require.Empty(t, rep.Failures)
		require.Equal(t, 2, rep.Completed)
		return
	}
	if testing.Short() {
		t.Skip("runs a child process")
	}
	srv := httptest.NewTLSServer(okChat())
	defer srv.Close()
	pemFile := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(pemFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644))
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.CommandContext(t.Context(), exe, "-test.run=^TestSSLCertFile$", "-test.v")
	cmd.Env = append(os.Environ(), sslChildEnv+"="+srv.URL, "SSL_CERT_FILE="+pemFile, "SSL_CERT_DIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.True(t, strings.Contains(string(out), "--- PASS: TestSSLCertFile"), "%s", out)
}

// TestModelsRedirectReason: a /models answer redirected elsewhere says
// where, never an empty reason.
func TestModelsRedirectReason(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "http://gpu-box.invalid:8000/v1/models?k=secret")
		w.WriteHeader(http.StatusFound)
	}))
	defer srv.Close()
	_, err := Run(t.Context(), Target{BaseURL: srv.URL + "/v1"}, Workload{Requests: 1, Concurrency: 1, ContextTokens: 512})
	require.Error(t, err)
	require.Contains(t, err.Error(), "HTTP 302 Found: redirected to http://gpu-box.invalid:8000/v1/models (not followed; set Target.BaseURL to the final URL)")
	require.NotContains(t, err.Error(), "secret")

	empty := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) }))
	defer empty.Close()
	_, err = Run(t.Context(), Target{BaseURL: empty.URL + "/v1"}, Workload{Requests: 1, Concurrency: 1, ContextTokens: 512})
	require.ErrorContains(t, err, "HTTP 502 Bad Gateway: (empty body)")
}

// TestH2CHintForms: each way an h2c-only server's answer reaches the
// HTTP/1.1 client gets the hint; https, other errors and an h2c transport
// get none.
func TestH2CHintForms(t *testing.T) {
	plain, _ := url.Parse("http://gpu-box:8000/v1/chat/completions")
	secure, _ := url.Parse("https://gpu-box/v1/chat/completions")
	frame := errors.New(`net/http: HTTP/1.x transport connection broken: malformed HTTP response "\x00\x00\x12\x04\x00\x00\x00\x00\x00"`)
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	for _, tc := range []struct {
		u    *url.URL
		rt   http.RoundTripper
		err  error
		want string
	}{
		{plain, nil, frame, "got the bytes of an HTTP/2 frame: the endpoint speaks only HTTP/2 without TLS (h2c)"},
		{plain, nil, reset, "the connection ended before its first byte"},
		{plain, nil, io.EOF, "the connection ended before its first byte"},
		{plain, nil, fmt.Errorf("write: %w", net.ErrClosed), "the connection ended before its first byte"},
		{plain, http.DefaultTransport, reset, "if it is one, give Target.HTTPClient a transport with unencrypted HTTP/2"},
		{secure, nil, reset, ""},
		{plain, nil, errors.New("dial tcp: connection refused"), ""},
		{plain, &http.Transport{Protocols: h2cOnly()}, frame, ""},
	} {
		got := client.TransportHint(tc.u, tc.rt, tc.err)
		if tc.want == "" {
			require.Empty(t, got, "%v %v", tc.u, tc.err)
			continue
		}
		require.Contains(t, got, "; want an HTTP/1.1 response")
		require.Contains(t, got, tc.want)
	}
}

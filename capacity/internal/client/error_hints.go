package client

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"

	"github.com/anvilbench/anvil/capacity/internal/h1"
)

// The hints below end the message of a failure whose cause a user would
// not guess from the transport's words: what the client expected, what the
// server did instead, and where the README says how to reach such an
// endpoint.

// h2cHint returns the hint for a request to u that failed with err before
// any response, when err is what an endpoint that speaks only HTTP/2
// without TLS (h2c, prior knowledge) does to an HTTP/1.1 request: it
// resets the connection (while the request is written or before the
// answer: a reset, a broken pipe, a closed connection, an EOF) or answers with an HTTP/2 frame (the first bytes
// of a SETTINGS or GOAWAY frame, which Go's HTTP/1.1 client calls a
// malformed response), at random, as its own reads race the reset. None
// for https (TLS negotiates HTTP/2 by ALPN), for other errors, or when rt
// already speaks h2c.
func h2cHint(u *url.URL, rt http.RoundTripper, err error) string {
	if u == nil || u.Scheme != "http" || speaksH2C(rt) {
		return ""
	}
	const how = "give Target.HTTPClient a transport with unencrypted HTTP/2 enabled (go doc github.com/anvilbench/anvil/anviltest: TLS and HTTP/2-only endpoints)"
	if strings.Contains(err.Error(), `malformed HTTP response "\x00\x00`) {
		return "; want an HTTP/1.1 response, got the bytes of an HTTP/2 frame: the endpoint speaks only HTTP/2 without TLS (h2c): " + how
	}
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "; want an HTTP/1.1 response, the connection ended before its first byte: an endpoint that speaks only HTTP/2 without TLS (h2c) does this to every HTTP/1.1 request; if it is one, " + how
	}
	return ""
}

// speaksH2C reports whether rt is an *http.Transport with unencrypted
// HTTP/2 enabled (under an h1.Transport: its fallback, which sends what
// the h1 transport does not).
func speaksH2C(rt http.RoundTripper) bool {
	if h, ok := rt.(*h1.Transport); ok {
		rt = h.Fallback()
	}
	tr, ok := rt.(*http.Transport)
	return ok && tr.Protocols != nil && tr.Protocols.UnencryptedHTTP2()
}

// tlsHint returns the hint for a certificate the client could not verify:
// a self-signed endpoint, or one signed by a private CA.
func tlsHint(err error) string {
	var (
		authErr x509.UnknownAuthorityError
		certErr *tls.CertificateVerificationError
	)
	if errors.As(err, &authErr) || (errors.As(err, &certErr) && errors.As(certErr.Err, &authErr)) {
		return "; the certificate is signed by no CA this machine trusts (self-signed or a private CA): set SSL_CERT_FILE to a PEM file of that CA, or give Target.HTTPClient a transport whose TLSClientConfig.RootCAs holds it (go doc github.com/anvilbench/anvil/anviltest: TLS and HTTP/2-only endpoints)"
	}
	return ""
}

// TransportHint is the hint of a request to u over rt that failed with
// err, if any: a certificate no CA this machine trusts, or an endpoint
// that speaks only HTTP/2 without TLS.
func TransportHint(u *url.URL, rt http.RoundTripper, err error) string {
	if h := tlsHint(err); h != "" {
		return h
	}
	return h2cHint(u, rt, err)
}

// AnswerReason is what a failure message quotes of a non-2xx answer whose
// body is the already scrubbed text: the text, or for a redirect with an
// empty body where it leads (not followed), or "(empty body)"; never an
// empty reason.
func AnswerReason(resp *http.Response, text string) string {
	if loc := resp.Header.Get("Location"); loc != "" && resp.StatusCode >= 300 && resp.StatusCode < 400 {
		where := "redirected to " + redactedLocation(loc) + " (not followed; set Target.BaseURL to the final URL)"
		if text == "" {
			return where
		}
		return where + ": " + text
	}
	if text == "" {
		return "(empty body)"
	}
	return text
}

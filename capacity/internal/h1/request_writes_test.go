package h1

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// countedWrites is a connection that counts its writes.
type countedWrites struct {
	net.Conn
	writes *atomic.Int32
}

func (c countedWrites) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// opaqueBody is a request body of a type net/http does not know to be in
// memory, as the client's are.
type opaqueBody struct{ io.Reader }

func (opaqueBody) Close() error { return nil }

// TestRequestInOneWrite: a request whose body net/http does not know to be
// in memory goes out with its head in one write when both fit the write
// buffer, and a larger body arrives whole, with WroteRequest after the
// last byte was written.
func TestRequestInOneWrite(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		io.WriteString(w, strconv.FormatInt(n, 10))
	}))
	defer srv.Close()
	var writes atomic.Int32
	fb := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		return countedWrites{c, &writes}, err
	}}
	defer fb.CloseIdleConnections()
	tr := New(fb)
	defer tr.CloseIdleConnections()
	for _, tt := range []struct {
		size      int
		maxWrites int32
	}{{100, 1}, {1500, 1}, {3 * defaultWriteBufferSize, 4}} {
		writes.Store(0)
		body := strings.Repeat("x", tt.size)
		var atWrote int32 = -1
		ctx := httptrace.WithClientTrace(t.Context(), &httptrace.ClientTrace{
			WroteRequest: func(httptrace.WroteRequestInfo) { atWrote = writes.Load() }})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, nil)
		require.NoError(t, err)
		req.Body, req.ContentLength = opaqueBody{strings.NewReader(body)}, int64(tt.size)
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		got, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, strconv.Itoa(tt.size), string(got), "the server read the whole body")
		require.LessOrEqual(t, writes.Load(), tt.maxWrites, "writes of a request with a body of %d bytes", tt.size)
		require.Positive(t, writes.Load())
		require.Equal(t, writes.Load(), atWrote, "WroteRequest comes after the request's last write")
	}
}

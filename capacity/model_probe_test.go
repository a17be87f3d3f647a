package capacity

import (
	"net/http"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// TestRunMaxModelLenOverProbe: an explicit Target.MaxModelLen wins over
// the window the fake's /v1/models advertises.
func TestRunMaxModelLenOverProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fakeserver.NewInMemory(fakeProfile("plain"))
		defer srv.Close()
		tg := Target{BaseURL: srv.URL + "/v1", HTTPClient: srv.Client(), MaxModelLen: 16384}
		rep, err := Run(t.Context(), tg, Workload{Requests: 1, ContextTokens: 65536})
		require.NoError(t, err)
		require.Equal(t, 16384, *rep.MaxContextTokens)
		require.Equal(t, "fake-plain", rep.Model)
		require.Equal(t, map[int]int{16384 - defaultMaxTokens - defaultMargin: 1}, rep.ContextDistribution, "contexts clamp to the prompt budget")
	})
}

func TestNewTransport(t *testing.T) {
	tr := newTransport(64)
	require.Equal(t, 64, tr.MaxIdleConnsPerHost)
	require.Equal(t, 128, tr.MaxConnsPerHost)
	require.GreaterOrEqual(t, tr.MaxIdleConns, 64)
	require.NotNil(t, tr.Proxy, "proxy settings kept")
	require.True(t, tr.ForceAttemptHTTP2, "HTTP/2 kept")
	require.NotSame(t, http.DefaultTransport, tr)
	require.Equal(t, 256, newTransport(256).MaxIdleConns)
	require.Equal(t, connWriteBuffer, tr.WriteBufferSize)
	require.Zero(t, tr.ReadBufferSize, "net/http's default read buffer kept")
}

// TestNewTransportKeepsBufferSizes: sizes http.DefaultTransport sets are
// kept, not overridden.
func TestNewTransportKeepsBufferSizes(t *testing.T) {
	def := http.DefaultTransport
	t.Cleanup(func() { http.DefaultTransport = def })
	http.DefaultTransport = &http.Transport{WriteBufferSize: 64 << 10, ReadBufferSize: 32 << 10}
	tr := newTransport(8)
	require.Equal(t, 64<<10, tr.WriteBufferSize)
	require.Equal(t, 32<<10, tr.ReadBufferSize)
}

package discovery

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/client"
)

// testConfig is the Config of a discovery of the server hc reaches at
// baseURL, nothing declared, GET /models bounded by a minute.
func testConfig(t testing.TB, baseURL string, hc *http.Client) Config {
	cl, err := client.New(client.Config{BaseURL: baseURL, HTTPClient: hc})
	require.NoError(t, err)
	return Config{Client: cl, BaseURL: baseURL, Timeout: time.Minute}
}

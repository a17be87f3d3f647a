package client

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConnectionRuleKeepsReuseWithAKeepAliveServer: a server that keeps
// its connections alive is never counted as closing them, and the rule
// keeps reusing connections; NewConnectionRule wraps a transport once.
func TestConnectionRuleKeepsReuseWithAKeepAliveServer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"tokens":[1,2,3]}`)
	}))
	defer srv.Close()

	rule := NewConnectionRule(http.DefaultTransport)
	require.Same(t, rule, NewConnectionRule(rule), "a rule is not wrapped again")
	hc := &http.Client{Transport: rule}
	defer hc.CloseIdleConnections()
	for range 2 {
		resp, err := hc.Post(srv.URL+"/tokenize", "application/json", nil)
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, `{"tokens":[1,2,3]}`, string(b))
	}
	require.Equal(t, 0, rule.KeptAliveClosed())
	require.False(t, rule.ReuseDisabled())
}

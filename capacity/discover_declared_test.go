package capacity

import (
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// declaredBudget is the documented bound of a whole discovery with the
// model and the window declared (capacity/PROTOCOL.md#context-window).
const declaredBudget = 5 * time.Second

// TestDeclaredDiscoveryIsBounded: with the model and the window declared,
// a server that never answers the discovery's requests costs the run
// declaredBudget in all, not a request timeout per step, and the
// run goes on with the declared window.
func TestDeclaredDiscoveryIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		chat := usageServer(`"prompt_tokens":512,"completion_tokens":2`)
		var (
			mu    sync.Mutex
			asked []string
		)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/chat/completions" {
				chat.ServeHTTP(w, r)
				return
			}
			mu.Lock()
			asked = append(asked, r.Method+" "+r.URL.Path)
			mu.Unlock()
			<-r.Context().Done()
		})
		target := Target{BaseURL: "http://hang.invalid/v1", Model: "m", MaxModelLen: 8192, HTTPClient: wiretest.Serve(t, h), MetricsURL: "off"}
		start := time.Now()
		rep, err := Run(t.Context(), target, Workload{Requests: 1, ContextTokens: 512, Timeout: time.Minute})
		require.NoError(t, err)
		require.Equal(t, declaredBudget, time.Since(start))
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, []string{"GET /v1/models"}, asked, "the budget ends the discovery at its first step")
		require.Equal(t, 1, rep.Completed)
		cw := rep.AnvilGo.ContextWindow
		require.Equal(t, 8192, cw.TruncationWindow)
		require.Equal(t, "Target.MaxModelLen", cw.Source)
		require.Nil(t, cw.Advertised)
	})
}

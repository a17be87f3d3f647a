package capacity

import (
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// TestStreamedBodyRedirected: a caller's client that follows a 307 or 308
// sends the body again through GetBody; the server receives the very same
// bytes, as many as Content-Length says, both times.
func TestStreamedBodyRedirected(t *testing.T) {
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		synctest.Test(t, func(t *testing.T) {
			var (
				mu     sync.Mutex
				bodies []string
			)
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				raw, err := io.ReadAll(r.Body)
				require.NoError(t, err)
				require.EqualValues(t, len(raw), r.ContentLength, "Content-Length")
				mu.Lock()
				bodies = append(bodies, string(raw))
				mu.Unlock()
				if r.URL.Path == "/v1/chat/completions" {
					http.Redirect(w, r, "/v2/chat/completions", status)
					return
				}
				wiretest.WriteOKStream(w, raw)
			})
			rep, err := Run(t.Context(), pipeTarget(t, h), Workload{Requests: 1, ContextTokens: 4096, PromptCacheMode: promptCacheUnique})
			require.NoError(t, err)
			require.Empty(t, rep.Failures)
			require.Len(t, bodies, 2)
			require.True(t, json.Valid([]byte(bodies[0])))
			require.Equal(t, bodies[0], bodies[1], "the redirected request carries the same body")
		})
	}
}

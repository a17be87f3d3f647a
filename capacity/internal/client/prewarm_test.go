package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/pipenet"
	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// TestPrewarmHoldsDistinctConnections: the warm-up's n requests hold their
// answers until all have arrived, so n connections are opened even though
// each answer alone would free its connection for the next request; the
// pool then serves n requests at once without a dial.
func TestPrewarmHoldsDistinctConnections(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &wiretest.ConnCounter{ModelsDelay: time.Millisecond}
		srv := pipenet.NewServer(h)
		defer srv.Close()
		cl := testClient(t, Config{HTTPClient: srv.Client(), Checks: Checks{MaxTokens: 8}})

		require.Equal(t, 7, cl.Prewarm(t.Context(), 7, time.Minute), "7 distinct live connections")
		require.Equal(t, 7, srv.Listener.Dials())
		require.EqualValues(t, 7, h.Models.Load())

		require.Equal(t, 7, sendAtOnce(t, cl, 7), "7 requests at once all reuse a prewarmed connection")
		require.Equal(t, 7, srv.Listener.Dials(), "no dial after the warm-up")
	})
}

// sendAtOnce sends n chat requests of cl at once, each of which must
// succeed, and returns how many went on a reused connection (no
// connect_ms).
func sendAtOnce(t *testing.T, cl *Client, n int) int {
	t.Helper()
	exs := make([]Exchange, n)
	var wg sync.WaitGroup
	for i := range exs {
		wg.Go(func() {
			cl.Send(t.Context(), promptBody(t, 8), &exs[i])
		})
	}
	wg.Wait()
	reused := 0
	for i := range exs {
		require.Empty(t, exs[i].class, "request %d: %s", i, exs[i].message)
		if exs[i].reused && exs[i].connectMS == nil {
			reused++
		}
	}
	return reused
}

// TestPrewarmBounded: a server that never answers GET /models holds the
// warm-up no longer than its limit, and no connection counts as warmed.
func TestPrewarmBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hang := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
		hc := wiretest.Serve(t, hang)
		cl := testClient(t, Config{HTTPClient: hc, Checks: Checks{MaxTokens: 8}})
		start := time.Now()
		require.Zero(t, cl.Prewarm(t.Context(), 3, 2*time.Second))
		require.Equal(t, 2*time.Second, time.Since(start))
		require.Zero(t, cl.Prewarm(context.Background(), 0, time.Second), "nothing to warm")
	})
}

// TestPrewarmLimitKeepsAnsweredConnections: when one GET /models is never
// answered, the limit cancels that request only; the connections that did
// answer stay live in the pool (prewarm counts them, and as many requests
// at once afterwards reuse them without a dial).
func TestPrewarmLimitKeepsAnsweredConnections(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var models atomic.Int32
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/models" {
				if models.Add(1) == 3 {
					<-r.Context().Done() // the third never answers
					return
				}
				fmt.Fprint(w, `{"object":"list","data":[{"id":"m"}]}`)
				return
			}
			raw, _ := io.ReadAll(r.Body)
			wiretest.WriteOKStream(w, raw)
		})
		srv := pipenet.NewServer(h)
		defer srv.Close()
		cl := testClient(t, Config{HTTPClient: srv.Client(), Checks: Checks{MaxTokens: 8}})

		start := time.Now()
		require.Equal(t, 2, cl.Prewarm(t.Context(), 3, 2*time.Second), "the two answered connections")
		require.Equal(t, 2*time.Second, time.Since(start))
		require.Equal(t, 3, srv.Listener.Dials())

		require.Equal(t, 2, sendAtOnce(t, cl, 2), "both requests on a warmed connection")
		require.Equal(t, 3, srv.Listener.Dials(), "no dial after the warm-up")
	})
}

// TestPrewarmClosingAnswerNotCounted: an answer that closes its connection
// (Connection: close) warms nothing: prewarm counts only the connections
// that stay live.
func TestPrewarmClosingAnswerNotCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var models atomic.Int32
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if models.Add(1) == 1 {
				w.Header().Set("Connection", "close")
			}
			fmt.Fprint(w, `{"object":"list","data":[{"id":"m"}]}`)
		})
		cl := testClient(t, Config{HTTPClient: wiretest.Serve(t, h), Checks: Checks{MaxTokens: 8}})
		require.Equal(t, 2, cl.Prewarm(t.Context(), 3, time.Minute), "the answer with Connection: close left no live connection")
	})
}

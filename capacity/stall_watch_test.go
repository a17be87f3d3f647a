package capacity

import (
	"fmt"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
)

// TestStallWatchExact: a stream that sends a chunk every 30 ms, five
// times, then goes silent is cancelled exactly StallTimeout after its last
// byte; gaps shorter than the limit never cancel it, however many reads
// came before.
func TestStallWatchExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const gap, limit = 30 * time.Millisecond, 50 * time.Millisecond
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			for range 5 {
				time.Sleep(gap)
				fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n")
				w.(http.Flusher).Flush()
			}
			<-r.Context().Done()
		})
		rep, err := Run(t.Context(), pipeTarget(t, h), Workload{Requests: 1, ContextTokens: 512, StallTimeout: limit})
		require.NoError(t, err)
		require.Len(t, rep.Failures, 1)
		f := rep.Failures[0]
		require.Equal(t, artifact.FailureTimeout, f.FailureClass)
		require.Equal(t, client.ErrorTypeStall, f.ErrorType)
		require.Equal(t, client.MS(5*gap+limit), f.ElapsedMS, "last byte at 150 ms, cancelled 50 ms later")
	})
}

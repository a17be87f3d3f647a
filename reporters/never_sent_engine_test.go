package reporters_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
)

// TestEngineNeverSentCountsAgree: a closed and an open loop cancelled
// while requests are in flight (and in the open loop queued at the cap or
// not yet due); whatever the engine
// recorded, the failures by class of the requests sent sum to the failed
// requests the line reports, and the never-sent ones are counted apart.
func TestEngineNeverSentCountsAgree(t *testing.T) {
	for _, rate := range []float64{0, 20, 1000} { // 0: a closed loop
		arrived := make(chan struct{}, 64)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			arrived <- struct{}{}
			<-r.Context().Done() // never answers
		}))
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			<-arrived
			<-arrived
			cancel()
		}()
		w := capacity.Workload{Requests: 40, Concurrency: 2, ContextTokens: 512, Rate: rate}
		if rate > 0 {
			w.Arrival = "constant"
		}
		rep, _ := capacity.Run(ctx, capacity.Target{BaseURL: srv.URL + "/v1", Model: "m", MaxModelLen: 8192}, w)
		cancel()
		srv.Close()
		require.NotNil(t, rep)
		sum := 0
		for _, n := range rep.SentFailureClasses() {
			sum += n
		}
		require.Equal(t, rep.SentFailedRequests(), sum, "rate %v: classes %v, sent %d, unsent %d", rate,
			rep.SentFailureClasses(), rep.SentRequests(), rep.UnsentRequests())
		require.Equal(t, 40, rep.Requests)
		require.Positive(t, rep.UnsentRequests())
	}
}

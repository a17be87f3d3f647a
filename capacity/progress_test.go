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

// progressLog records every Progress call.
type progressLog struct {
	mu    sync.Mutex
	calls []Progress
}

func (l *progressLog) add(p Progress) {
	l.mu.Lock()
	l.calls = append(l.calls, p)
	l.mu.Unlock()
}

// phases returns the calls of phase.
func (l *progressLog) phase(phase string) []Progress {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Progress
	for _, p := range l.calls {
		if p.Phase == phase {
			out = append(out, p)
		}
	}
	return out
}

// TestProgressTicksWhileARequestHangs: a measured request the server
// answers only after 5 s leaves no event for the runner to report, and
// the snapshots still come every second, the oldest request's age growing
// with them.
func TestProgressTicksWhileARequestHangs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log progressLog
		h := &sleepyStream{d: 5 * time.Second}
		w := Workload{Requests: 1, Concurrency: 1, ContextTokens: 512, Timeout: time.Minute, Progress: log.add}
		_, err := Run(t.Context(), pipeTarget(t, h), w)
		require.NoError(t, err)
		measured := log.phase("measured")
		var ages []time.Duration
		for _, p := range measured {
			if p.InFlight == 1 {
				ages = append(ages, p.Oldest)
			}
		}
		// At the dispatch (age 0), then every second until the answer
		// (the tick at 5 s and the answer are due at one instant).
		require.Contains(t, []int{5, 6}, len(ages), "%+v", measured)
		for i, age := range ages {
			require.Equal(t, time.Duration(i)*time.Second, age, "%+v", measured)
		}
		last := measured[len(measured)-1]
		require.Equal(t, 1, last.Succeeded)
		require.Zero(t, last.Oldest, "none in flight")
	})
}

// TestProgressTicksDuringDiscovery: while the server takes 3 s to list
// its models, the snapshots say "discovery" every second; then comes the
// measured phase (a Target.HTTPClient's pool is not warmed).
func TestProgressTicksDuringDiscovery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log progressLog
		slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/models" {
				time.Sleep(3 * time.Second)
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`{"object":"list","data":[{"id":"m","object":"model","max_model_len":8192}]}`))
				return
			}
			withoutDiscovery(&sleepyStream{d: time.Millisecond}).ServeHTTP(w, r)
		})
		tgt := Target{BaseURL: "http://pipe.invalid/v1", HTTPClient: wiretest.Serve(t, slow), MetricsURL: "off"}
		w := Workload{Requests: 2, Concurrency: 1, ContextTokens: 512, Progress: log.add}
		_, err := Run(t.Context(), tgt, w)
		require.NoError(t, err)
		var elapsed []time.Duration
		for _, p := range log.phase("discovery") {
			elapsed = append(elapsed, p.Elapsed)
			require.Zero(t, p.Dispatched)
		}
		// The tick at 3 s and the answer are due at one instant.
		require.Contains(t, []int{2, 3}, len(elapsed), "%v", elapsed)
		require.Equal(t, []time.Duration{time.Second, 2 * time.Second}, elapsed[:2])
		require.NotEmpty(t, log.phase("measured"))
		var order []string
		for _, p := range log.calls {
			if len(order) == 0 || order[len(order)-1] != p.Phase {
				order = append(order, p.Phase)
			}
		}
		require.Equal(t, []string{"discovery", "measured"}, order)
	})
}

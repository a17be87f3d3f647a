package capacity

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// TestRunPrewarmsConnections: with Run's own transport (a loopback server),
// the measured phase starts with Concurrency live connections: the server
// accepts exactly that many, connections.prewarmed counts them, and every
// measured request reuses one (no connect_ms, dialed_in_measurement 0).
// A server that closes every connection after its answer makes the
// requests after the first wave dial: each records its connect time and
// counts in dialed_in_measurement.
func TestRunPrewarmsConnections(t *testing.T) {
	for _, closing := range []bool{false, true} {
		t.Run(fmt.Sprintf("close=%t", closing), func(t *testing.T) {
			h := &wiretest.ConnCounter{CloseAfterChat: closing}
			srv := httptest.NewUnstartedServer(h)
			srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					h.Conns.Add(1)
				}
			}
			srv.Start()
			defer srv.Close()
			const conc, requests = 6, 18
			rep, err := Run(t.Context(), Target{BaseURL: srv.URL + "/v1", Model: "m", MaxModelLen: 8192, MetricsURL: "off"},
				Workload{Requests: requests, Concurrency: conc, ContextTokens: 512})
			require.NoError(t, err)
			require.Empty(t, rep.Failures)
			require.EqualValues(t, 1+conc, h.Models.Load(), "the window discovery's, then one warm-up request per connection")
			require.EqualValues(t, requests, h.Chats.Load())
			c := rep.AnvilGo.Connections
			require.Equal(t, conc, c.Prewarmed)
			dialed := 0
			for _, d := range rep.AnvilGo.Requests {
				require.NotNil(t, d.Phases)
				require.Equal(t, !d.Phases.Reused, d.Phases.ConnectMS != nil, "request %d: connect_ms exactly on a dial", d.RequestIndex)
				if !d.Phases.Reused {
					dialed++
				}
			}
			require.Equal(t, dialed, c.DialedInMeasurement)
			if closing {
				// The first wave reuses the warmed connections, then every
				// answer closes its connection and each next request dials.
				require.Equal(t, requests-conc, c.DialedInMeasurement)
				require.EqualValues(t, requests, h.Conns.Load())
			} else {
				require.Zero(t, c.DialedInMeasurement, "no measured request dialed")
				require.EqualValues(t, conc, h.Conns.Load(), "the warm-up's connections only")
			}
		})
	}
}

// TestRequestPhases: the phases of a request, exactly, under fake time: the
// connection at once (reused: the discovery's), the
// request written at once, the headers 20 ms later (first_byte_ms), a
// named event without data 30 ms after them (first_event_ms), the first
// content 10 ms later; TTFT still runs from t0.
func TestRequestPhases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			time.Sleep(20 * time.Millisecond)
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			time.Sleep(30 * time.Millisecond)
			fmt.Fprint(w, "event: ping\n\n")
			w.(http.Flusher).Flush()
			time.Sleep(10 * time.Millisecond)
			fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}\n\n")
			fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":512,\"completion_tokens\":1,\"total_tokens\":513}}\n\ndata: [DONE]\n\n")
		})
		rep, err := Run(t.Context(), pipeTarget(t, h), Workload{Requests: 1, ContextTokens: 512})
		require.NoError(t, err)
		require.Empty(t, rep.Failures)
		require.Equal(t, 60.0, rep.RequestTimings[0].TTFTMS, "TTFT from t0")
		got := rep.AnvilGo.Request(0).Phases
		// The connection is the one the window discovery left idle.
		want := &artifact.Phases{GotConnMS: 0, WroteRequestMS: new(0.0), FirstByteMS: new(20.0), FirstEventMS: new(50.0), Reused: true}
		require.Empty(t, cmp.Diff(want, got, cmpopts.IgnoreUnexported(artifact.Phases{})))
		require.Zero(t, rep.AnvilGo.Connections.Prewarmed, "a Target.HTTPClient's pool is the caller's")
		require.Zero(t, rep.AnvilGo.Connections.DialedInMeasurement)
	})
}

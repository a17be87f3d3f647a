package capacity

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/pipenet"
)

// connCounter serves /v1/models and a short chat stream, counting the
// connections it accepted and the requests of each kind; other paths
// (the window discovery's native endpoints) are 404.
type connCounter struct {
	conns, models, chats atomic.Int32
	closeAfterChat       bool // answer every chat with Connection: close
	modelsDelay          time.Duration
}

func (c *connCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/v1/models" {
		c.models.Add(1)
		time.Sleep(c.modelsDelay)
		fmt.Fprint(w, `{"object":"list","data":[{"id":"m","max_model_len":8192}]}`)
		return
	}
	if r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	c.chats.Add(1)
	if c.closeAfterChat {
		w.Header().Set("Connection", "close")
	}
	writeOKStream(w, raw)
}

// TestPrewarmHoldsDistinctConnections: the warm-up's n requests hold their
// answers until all have arrived, so n connections are opened even though
// each answer alone would free its connection for the next request; the
// pool then serves n requests at once without a dial.
func TestPrewarmHoldsDistinctConnections(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &connCounter{modelsDelay: time.Millisecond}
		srv := pipenet.NewServer(h)
		defer srv.Close()
		tg := Target{BaseURL: "http://pipe.invalid/v1", Model: "m", MaxModelLen: 8192, MetricsURL: "off"}
		cl, err := newClient(tg, Workload{MaxTokens: 8, Timeout: time.Minute}, srv.Client(), "")
		require.NoError(t, err)

		require.Equal(t, 7, cl.prewarm(t.Context(), 7, time.Minute), "7 distinct live connections")
		require.Equal(t, 7, srv.Listener.Dials())
		require.EqualValues(t, 7, h.models.Load())

		require.Equal(t, 7, sendAtOnce(t, cl, 7), "7 requests at once all reuse a prewarmed connection")
		require.Equal(t, 7, srv.Listener.Dials(), "no dial after the warm-up")
	})
}

// sendAtOnce sends n chat requests of cl at once, each of which must
// succeed, and returns how many went on a reused connection (no
// connect_ms).
func sendAtOnce(t *testing.T, cl *client, n int) int {
	t.Helper()
	exs := make([]exchange, n)
	var wg sync.WaitGroup
	for i := range exs {
		wg.Go(func() {
			var bb bodyBuffer
			bb.buf = cl.enc.appendBody(bb.reset(), []byte("p"))
			cl.send(t.Context(), &bb, &exs[i])
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
		hc := servePipe(t, hang)
		cl, err := newClient(Target{BaseURL: "http://pipe.invalid/v1", Model: "m"}, Workload{MaxTokens: 8, Timeout: time.Minute}, hc, "")
		require.NoError(t, err)
		start := time.Now()
		require.Zero(t, cl.prewarm(t.Context(), 3, 2*time.Second))
		require.Equal(t, 2*time.Second, time.Since(start))
		require.Zero(t, cl.prewarm(context.Background(), 0, time.Second), "nothing to warm")
	})
}

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
			h := &connCounter{closeAfterChat: closing}
			srv := httptest.NewUnstartedServer(h)
			srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					h.conns.Add(1)
				}
			}
			srv.Start()
			defer srv.Close()
			const conc, requests = 6, 18
			rep, err := Run(t.Context(), Target{BaseURL: srv.URL + "/v1", Model: "m", MaxModelLen: 8192, MetricsURL: "off"},
				Workload{Requests: requests, Concurrency: conc, ContextTokens: 512})
			require.NoError(t, err)
			require.Empty(t, rep.Failures)
			require.EqualValues(t, 1+conc, h.models.Load(), "the window discovery's, then one warm-up request per connection")
			require.EqualValues(t, requests, h.chats.Load())
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
				require.EqualValues(t, requests, h.conns.Load())
			} else {
				require.Zero(t, c.DialedInMeasurement, "no measured request dialed")
				require.EqualValues(t, conc, h.conns.Load(), "the warm-up's connections only")
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
			writeOKStream(w, raw)
		})
		srv := pipenet.NewServer(h)
		defer srv.Close()
		cl, err := newClient(Target{BaseURL: "http://pipe.invalid/v1", Model: "m"}, Workload{MaxTokens: 8, Timeout: time.Minute}, srv.Client(), "")
		require.NoError(t, err)

		start := time.Now()
		require.Equal(t, 2, cl.prewarm(t.Context(), 3, 2*time.Second), "the two answered connections")
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
		cl, err := newClient(Target{BaseURL: "http://pipe.invalid/v1", Model: "m"}, Workload{MaxTokens: 8, Timeout: time.Minute}, servePipe(t, h), "")
		require.NoError(t, err)
		require.Equal(t, 2, cl.prewarm(t.Context(), 3, time.Minute), "the answer with Connection: close left no live connection")
	})
}

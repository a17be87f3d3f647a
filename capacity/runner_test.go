package capacity

import (
	"context"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/wiretest"
	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// sleepyStream answers every chat request after d with writeOKStream (or
// not at all when the client gives up first) and
// records how many requests were in flight at most.
type sleepyStream struct {
	d        time.Duration
	inFlight atomic.Int32
	max      atomic.Int32
	seen     atomic.Int32
}

func (s *sleepyStream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	s.seen.Add(1)
	for {
		m := s.max.Load()
		if n <= m || s.max.CompareAndSwap(m, n) {
			break
		}
	}
	select {
	case <-time.After(s.d):
	case <-r.Context().Done(): // the client gave up: answer nothing
		return
	}
	wiretest.WriteOKStream(w, raw)
}

// pipeTarget is a target served by h over the in-memory transport, with
// the model and window declared. Its handlers answer every path and count
// every request, so the server-metrics sampler is off
// (observers_builtin_test.go tests it), and the window discovery the run
// still makes is answered 404 before h (as a server without a model list
// or native endpoints answers; discover_test.go and
// context_discovery_test.go test it): h sees only the run's own requests.
func pipeTarget(t *testing.T, h http.Handler) Target {
	return Target{BaseURL: "http://pipe.invalid/v1", Model: "m", MaxModelLen: 8192, HTTPClient: wiretest.Serve(t, withoutDiscovery(h)), MetricsURL: "off"}
}

// withoutDiscovery answers 404 to the requests of window discovery
// (GET /v1/models, /props, /slots, /api/ps, POST /api/show) and serves
// every other request with h.
func withoutDiscovery(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method + " " + r.URL.Path {
		case "GET /v1/models", "GET " + "/props", "GET " + "/slots", "GET " + "/api/ps", "POST " + "/api/show":
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// TestRunClosedLoop: exactly Concurrency requests are in flight and a
// request is sent the moment one finishes, so 20 requests of 10 ms at
// concurrency 4 take exactly 5 rounds of fake time.
func TestRunClosedLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &sleepyStream{d: 10 * time.Millisecond}
		rep, err := Run(t.Context(), pipeTarget(t, h), Workload{Requests: 20, Concurrency: 4, ContextTokens: 512})
		require.NoError(t, err)
		require.Equal(t, 20, rep.Completed)
		require.EqualValues(t, 4, h.max.Load())
		require.EqualValues(t, 20, h.seen.Load())
		require.Equal(t, 50.0, rep.WallClockMS)
		for _, row := range rep.RequestTimings {
			require.Equal(t, 10.0, row.E2EMS)
		}
		require.Equal(t, 20*3/(50.0/1000), *rep.Metrics.ThroughputTokS)
	})
}

// TestRunCancel: cancelling the run stops it at once; in-flight and unsent
// requests become "cancelled" failures, finished ones keep their rows, and
// no goroutine outlives Run (the bubble would deadlock otherwise).
func TestRunCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fakeserver.NewInMemory(fakeProfile("reasoning"))
		defer srv.Close()
		ctx, cancel := context.WithCancel(t.Context())
		const cancelAfter = 20 * time.Second
		start := time.Now()
		time.AfterFunc(cancelAfter, cancel)
		rep, err := Run(ctx, Target{BaseURL: srv.URL + "/v1", HTTPClient: srv.Client()},
			Workload{Requests: 40, Concurrency: 4, MaxTokens: 1024, ContextTokens: 16000})
		require.NoError(t, err)
		require.Equal(t, cancelAfter, time.Since(start), "Run returns the instant the run is cancelled")
		require.Equal(t, 40, rep.Requests)
		require.NotEmpty(t, rep.RequestTimings, "finished requests keep their rows")
		require.Equal(t, 40, rep.Completed+rep.Failed)
		require.False(t, rep.PerformanceEligible)
		inFlight := 0
		for _, f := range rep.Failures {
			require.Equal(t, artifact.FailureCancelled, f.FailureClass)
			if f.ElapsedMS > 0 {
				inFlight++
				require.Contains(t, f.ErrorMessage, "run cancelled before the request finished")
			} else {
				require.Equal(t, "run cancelled before the request was sent", f.ErrorMessage)
			}
		}
		require.Equal(t, 4, inFlight, "the requests in flight were cancelled")
		synctest.Wait()
		require.Empty(t, goroutinesIn("github.com/anvilbench/anvil/capacity."), "no goroutine of the run outlives Run")
		for _, tr := range srv.Traces() {
			require.True(t, tr.Done())
		}
	})
}

// goroutinesIn returns the stacks of the goroutines executing a function of
// pkg (a frame, not a "created by" line) other than a test function;
// the calling goroutine is left out.
func goroutinesIn(pkg string) []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, pkg+"goroutinesIn") {
			continue
		}
		for _, line := range strings.Split(g, "\n") {
			if strings.HasPrefix(line, pkg) && !strings.HasPrefix(line, pkg+"Test") {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// TestRunCancelBeforeStart: a run cancelled before it starts reports every
// planned request as cancelled.
func TestRunCancelBeforeStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		rep, err := Run(ctx, pipeTarget(t, &sleepyStream{}), Workload{Requests: 5, Concurrency: 2, ContextTokens: 512})
		require.NoError(t, err)
		require.Equal(t, 5, rep.Failed)
		require.Equal(t, 0, rep.ResponsesReceived)
	})
}

// panicky panics in RoundTrip for the chat request that arrives
// index-th.
type panicky struct {
	next  http.RoundTripper
	index int32
	n     atomic.Int32
}

func (p *panicky) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.Path, "/chat/completions") && p.n.Add(1)-1 == p.index {
		panic("transport defect")
	}
	return p.next.RoundTrip(r)
}

// TestRunWorkerPanic: a panic while sending a request becomes a
// runner_error failure of that request and the run goes on.
func TestRunWorkerPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fakeserver.NewInMemory(fakeserver.Fast())
		defer srv.Close()
		hc := &http.Client{Transport: &panicky{next: srv.Client().Transport, index: 2}}
		rep, err := Run(t.Context(), Target{BaseURL: srv.URL + "/v1", HTTPClient: hc, Model: "fake-fast", MaxModelLen: 32768,
			MetricsURL: "off"}, // the transport panics on its third chat request
			Workload{Requests: 5, Concurrency: 1})
		require.NoError(t, err)
		require.Len(t, rep.Failures, 1)
		f := rep.Failures[0]
		require.Equal(t, 2, f.RequestIndex)
		require.Equal(t, artifact.FailureRunnerError, f.FailureClass)
		require.Contains(t, f.ErrorMessage, "panic in the request worker: transport defect")
		require.LessOrEqual(t, len([]rune(f.ErrorMessage)), wiretest.MaxErrorMessageRunes)
		require.Equal(t, 4, rep.Completed)
	})
}

// TestRunRequestError: a connection that cannot be made is a request_error
// naming the cause (connection_refused), without the request failing the run.
func TestRunRequestError(t *testing.T) {
	refused := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: network, Err: syscall.ECONNREFUSED}
	}}
	rep, err := Run(t.Context(), Target{BaseURL: "http://user:pw@127.0.0.1:9/v1", Model: "m", MaxModelLen: 8192, HTTPClient: &http.Client{Transport: refused}},
		Workload{Requests: 2, Concurrency: 2, ContextTokens: 512})
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:9/v1", rep.BaseURL, "credentials removed")
	require.Len(t, rep.Failures, 2)
	for _, f := range rep.Failures {
		require.Equal(t, artifact.FailureRequestError, f.FailureClass)
		require.Equal(t, client.ErrorTypeConnectionRefused, f.ErrorType)
		require.Contains(t, f.ErrorMessage, "connection refused")
		require.NotContains(t, f.ErrorMessage, "pw")
		require.False(t, f.ResponseReceived)
		require.Nil(t, f.ResponseMetadata)
		require.Nil(t, f.HTTPStatus)
	}
}

// TestRunMaxFailures: dispatch stops once MaxFailures requests failed; the
// report accounts for the requests sent.
func TestRunMaxFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := fakeserver.Fast()
		cfg.Faults.Probability = map[fakeserver.Fault]float64{"http_500": 1}
		rep, err := runFake(t, cfg, Workload{Requests: 50, Concurrency: 1, MaxFailures: 3})
		require.NoError(t, err)
		require.Equal(t, 3, rep.Requests)
		require.Equal(t, 3, rep.Failed)
		require.Equal(t, 3, rep.MetricPopulation.AttemptedRequests)
	})
}

// TestRunDuration: a campaign sends no request after Duration; requests is
// what was dispatched, and all of it finished.
func TestRunDuration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &sleepyStream{d: 30 * time.Millisecond}
		rep, err := Run(t.Context(), pipeTarget(t, h), Workload{Duration: 100 * time.Millisecond, Concurrency: 2, ContextTokens: 512})
		require.NoError(t, err)
		// Dispatch at 0, 30, 60 and 90 ms on each of 2 workers; none at 120.
		require.Equal(t, 8, rep.Requests)
		require.Equal(t, 8, rep.Completed)
		require.EqualValues(t, 8, h.seen.Load())
		require.Equal(t, 120.0, rep.WallClockMS, "in-flight requests finish")
		require.True(t, rep.PerformanceEligible)
		require.Equal(t, map[int]int{512: 8}, rep.ContextDistribution)
	})
}

// TestRunWarmupAndProgress: warm-up requests are sent first and left out;
// the progress callback sees every step, one call at a time.
func TestRunWarmupAndProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &sleepyStream{d: time.Millisecond}
		var (
			mu    sync.Mutex
			calls []Progress
			busy  atomic.Bool
		)
		w := Workload{Requests: 6, Concurrency: 3, Warmup: 4, ContextTokens: 512, Progress: func(p Progress) {
			require.True(t, busy.CompareAndSwap(false, true), "progress calls never overlap")
			defer busy.Store(false)
			mu.Lock()
			calls = append(calls, p)
			mu.Unlock()
		}}
		rep, err := Run(t.Context(), pipeTarget(t, h), w)
		require.NoError(t, err)
		require.EqualValues(t, 10, h.seen.Load(), "4 warm-up + 6 measured requests")
		require.Equal(t, 6, rep.Requests)
		require.Equal(t, 6, rep.Completed)
		warm := 0
		for _, p := range calls {
			if p.Warmup {
				warm++
				require.Zero(t, p.Dispatched)
			}
			require.LessOrEqual(t, p.InFlight, 3)
		}
		require.Equal(t, 8, warm, "4 dispatches and 4 completions")
		last := calls[len(calls)-1]
		require.Equal(t, Progress{Phase: "measured", Planned: 6, Dispatched: 6, Succeeded: 6, InFlight: 0, Elapsed: last.Elapsed}, last)
	})
}

// TestRunBurst: a burst sends Burst requests at once over Burst
// connections, and the report says so.
func TestRunBurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &sleepyStream{d: 10 * time.Millisecond}
		rep, err := Run(t.Context(), pipeTarget(t, h), Workload{Burst: 6, ContextTokens: 512})
		require.NoError(t, err)
		require.Equal(t, 6, rep.Requests)
		require.Equal(t, 6, rep.Concurrency)
		require.EqualValues(t, 6, h.max.Load(), "all at once")
		require.Equal(t, 10.0, rep.WallClockMS)
		require.True(t, rep.ServeFlags.SharedPrefixBurst)
		require.Equal(t, "shared", rep.PromptCacheMode)
	})
}

// TestRunUniqueNonce: unique-mode prompts carry a fresh nonce per run unless
// it is omitted, which makes runs with one seed send the same prompts.
func TestRunUniqueNonce(t *testing.T) {
	firstPrompt := func(t *testing.T, w Workload) string {
		rc := &recorder{}
		_, err := Run(t.Context(), pipeTarget(t, rc), w)
		require.NoError(t, err)
		return rc.body["messages"].([]any)[0].(map[string]any)["content"].(string)
	}
	synctest.Test(t, func(t *testing.T) {
		w := Workload{Requests: 1, ContextTokens: 2048, PromptCacheMode: promptCacheUnique, SharedPrefixTokens: 256}
		require.NotEqual(t, firstPrompt(t, w), firstPrompt(t, w), "a nonce per run")
		w.OmitUniqueNonce = true
		require.Equal(t, firstPrompt(t, w), firstPrompt(t, w), "reproducible without the nonce")
	})
}

package capacity

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// driftServer streams every chat answer as one content chunk after a TTFT
// and its usage (100 completion tokens) after a decode time, both drawn
// with ±20% jitter from the request's arrival count and shaped by the
// time since the first request: a server that is not the fake.
type driftServer struct {
	ttft, decode func(since time.Duration, n int) time.Duration

	mu    sync.Mutex
	first time.Time
	seen  int
}

func (s *driftServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	s.mu.Lock()
	if s.seen == 0 {
		s.first = time.Now()
	}
	s.seen++
	n, since := s.seen, time.Since(s.first)
	s.mu.Unlock()
	rng := rand.New(rand.NewPCG(uint64(n), 29))
	jitter := func(d time.Duration) time.Duration { return time.Duration(float64(d) * (0.8 + 0.4*rng.Float64())) }
	ttft, decode := jitter(s.ttft(since, n)), jitter(s.decode(since, n))
	w.Header().Set("Content-Type", "text/event-stream")
	time.Sleep(ttft)
	_, _ = io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}\n\n")
	w.(http.Flusher).Flush()
	time.Sleep(decode)
	_, _ = fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\" done\"},\"finish_reason\":\"stop\"}]}\n\n"+
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":250,\"completion_tokens\":100,\"total_tokens\":350}}\n\ndata: [DONE]\n\n")
}

// TestRunSteadyWindow: a closed loop against a server that is cold for
// its first 5 s (TTFT 8 times longer) and whose last request runs 30 s
// alone reports a steady window that excludes both, with the window's
// metrics beside the whole run's; a server that slows down the whole run
// reports none, and says why (capacity/PROTOCOL.md#steady).
func TestRunSteadyWindow(t *testing.T) {
	const n = 800
	t.Run("slow start, long tail", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := &driftServer{
				ttft: func(since time.Duration, _ int) time.Duration {
					if since < 5*time.Second {
						return 400 * time.Millisecond
					}
					return 50 * time.Millisecond
				},
				decode: func(_ time.Duration, k int) time.Duration {
					if k == n {
						return 30 * time.Second
					}
					return 350 * time.Millisecond
				},
			}
			rep, err := Run(t.Context(), pipeTarget(t, s), Workload{Requests: n, Concurrency: 8, ContextTokens: 256})
			require.NoError(t, err)
			require.Equal(t, n, rep.Completed)
			st := rep.AnvilGo.Steady
			require.NotNil(t, st)
			require.True(t, st.Found, "%v", st.Reason)
			require.Equal(t, "in_flight", st.Load)
			require.Equal(t, 1000.0, st.BinMS)
			require.GreaterOrEqual(t, *st.StartMS, 5000.0, "the cold start is left out")
			// The tail: the last request alone for 30 s at the end.
			last := 0.0
			for _, d := range rep.AnvilGo.Requests[:n-1] {
				last = max(last, *d.EndMS)
			}
			require.LessOrEqual(t, *st.EndMS, last, "the long tail is left out")
			require.Greater(t, rep.WallClockMS-*st.EndMS, 29000.0)
			require.InDelta(t, 50, *st.TTFTP50MS, 10, "the window's TTFT is the warm server's")
			require.Greater(t, *rep.Metrics.TTFT.P95, 300.0, "the whole run's p95 holds the cold start")
			// 8 streams of 100 tokens every ~400 ms.
			require.InDelta(t, 2000, *st.OutputTokS, 200)
			require.Less(t, *rep.Metrics.ThroughputTokS, 0.75**st.OutputTokS, "the tail drags the whole run's throughput")
		})
	})
	t.Run("never settles", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := &driftServer{
				ttft:   func(since time.Duration, _ int) time.Duration { return 50*time.Millisecond + since/50 },
				decode: func(time.Duration, int) time.Duration { return 200 * time.Millisecond },
			}
			rep, err := Run(t.Context(), pipeTarget(t, s), Workload{Requests: 400, Concurrency: 4, ContextTokens: 256})
			require.NoError(t, err)
			st := rep.AnvilGo.Steady
			require.False(t, st.Found)
			require.Nil(t, st.TTFTP50MS)
			require.Contains(t, *st.Reason, "the median TTFT per bin trends")
		})
	})
}

// TestRunWarmupByTimeAndUntilSteady: a warm-up by time sends requests for
// its duration and none after; one until steady stops once its own
// requests are steady, past the cold start, well before its limit, and
// the measured phase then has a steady window from its start; against a
// server that never settles it runs to its limit and says so.
func TestRunWarmupByTimeAndUntilSteady(t *testing.T) {
	cold := func() *driftServer {
		return &driftServer{
			ttft: func(since time.Duration, _ int) time.Duration {
				if since < 5*time.Second {
					return 400 * time.Millisecond
				}
				return 50 * time.Millisecond
			},
			decode: func(time.Duration, int) time.Duration { return 350 * time.Millisecond },
		}
	}
	t.Run("time", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := &sleepyStream{d: 250 * time.Millisecond}
			rep, err := Run(t.Context(), pipeTarget(t, h), Workload{Requests: 40, Concurrency: 4, ContextTokens: 256, WarmupFor: time.Second})
			require.NoError(t, err)
			run := rep.AnvilGo.Run
			require.Equal(t, "time", *run.Warmup)
			require.Nil(t, run.WarmupSteady)
			// 4 slots of 250 ms requests: sends at 0, 0.25, 0.5 and
			// 0.75 s, none at 1 s, when the last ones end.
			require.Equal(t, 16, *run.WarmupRequests)
			require.Equal(t, 1000.0, *run.WarmupMS)
			require.EqualValues(t, 16+40, h.seen.Load())
		})
	})
	t.Run("steady", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := cold()
			rep, err := Run(t.Context(), pipeTarget(t, s), Workload{Requests: 400, Concurrency: 8, ContextTokens: 256,
				WarmupSteady: true, WarmupFor: 2 * time.Minute})
			require.NoError(t, err)
			run := rep.AnvilGo.Run
			require.Equal(t, "steady", *run.Warmup)
			require.True(t, *run.WarmupSteady)
			require.Greater(t, *run.WarmupMS, 5000.0, "past the cold start")
			require.Less(t, *run.WarmupMS, 30000.0, "well before the limit")
			st := rep.AnvilGo.Steady
			require.True(t, st.Found, "%v", st.Reason)
			require.InDelta(t, 50, *st.TTFTP50MS, 10)
			require.InDelta(t, 50, *rep.Metrics.TTFT.P95, 15, "the measured phase is warm throughout")
		})
	})
	t.Run("never steady", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := &driftServer{
				ttft:   func(since time.Duration, _ int) time.Duration { return 50*time.Millisecond + since/50 },
				decode: func(time.Duration, int) time.Duration { return 200 * time.Millisecond },
			}
			rep, err := Run(t.Context(), pipeTarget(t, s), Workload{Requests: 20, Concurrency: 4, ContextTokens: 256,
				WarmupSteady: true, WarmupFor: 20 * time.Second})
			require.NoError(t, err)
			run := rep.AnvilGo.Run
			require.False(t, *run.WarmupSteady)
			require.GreaterOrEqual(t, *run.WarmupMS, 20000.0, "ran to its limit")
		})
	})
}

package steady

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/stretchr/testify/require"
)

// timing is one request of a synthetic run: when it was due (and sent,
// unless held) and how long it took, in ms.
type timing struct {
	due, wait, ttft, e2e float64
	fail                 bool
}

// report builds the report of requests sent at their due time plus wait,
// each with 100 output tokens decoded evenly after its TTFT, and the
// phase ending when the last one did (or at wall when larger).
func steadyReport(concurrency int, ts []timing, wall float64) *artifact.Report {
	r := &artifact.Report{Concurrency: concurrency, Requests: len(ts)}
	x := r.Extension()
	for i, t := range ts {
		sent, end := t.due+t.wait, t.due+t.wait+t.e2e
		wall = max(wall, end)
		d := artifact.RequestDetail{RequestIndex: i, Outcome: artifact.OutcomeSuccess,
			ScheduledMS: new(t.due), SentMS: new(sent), QueueMS: new(t.wait), EndMS: new(end),
			FirstOutputMS: new(sent + t.ttft), FirstContentMS: new(sent + t.ttft),
			ScheduledTTFTMS: new(t.wait + t.ttft), ScheduledE2EMS: new(t.wait + t.e2e)}
		if t.fail {
			d.Outcome = "http_error"
			d.FirstOutputMS, d.FirstContentMS, d.ScheduledTTFTMS, d.ScheduledE2EMS = nil, nil, nil, nil
			r.Failures = append(r.Failures, artifact.Failure{RequestIndex: i})
		} else {
			gen := t.e2e - t.ttft
			r.RequestTimings = append(r.RequestTimings, artifact.TimingRow{RequestIndex: i, OutputTokens: new(100),
				OutputTokenSource: artifact.SourceUsage, TTFTMS: t.ttft, TimeToFirstOutputMS: t.ttft, E2EMS: t.e2e,
				GenerationMS: gen, TPOTMS: new(gen / 99), DecodeTokS: new(99 / gen * 1000)})
		}
		x.Requests = append(x.Requests, d)
	}
	r.WallClockMS = wall
	return r
}

// closedLoop is a closed loop of concurrency slots, each sending its next
// request when its last one ended, until n were sent; lat gives request
// i's TTFT and E2E from the time it is sent.
func closedLoop(concurrency, n int, lat func(i int, at float64) (ttft, e2e float64)) []timing {
	free := make([]float64, concurrency)
	var ts []timing
	for i := range n {
		k := 0
		for j := range free {
			if free[j] < free[k] {
				k = j
			}
		}
		ttft, e2e := lat(i, free[k])
		ts = append(ts, timing{due: free[k], ttft: ttft, e2e: e2e})
		free[k] += e2e
	}
	return ts
}

// jitter is a deterministic noise source: uniform in [1-f, 1+f].
func jitter(seed uint64) func(f float64) float64 {
	rng := rand.New(rand.NewPCG(seed, 7))
	return func(f float64) float64 { return 1 + f*(2*rng.Float64()-1) }
}

// TestOfReportClosedLoop: a closed loop whose latencies only jitter is
// steady over nearly all of its phase, and the window's metrics are its
// requests'.
func TestOfReportClosedLoop(t *testing.T) {
	j := jitter(1)
	ts := closedLoop(8, 800, func(int, float64) (float64, float64) { return 50 * j(0.2), 400 * j(0.2) })
	r := steadyReport(8, ts, 0)
	st := OfReport(r, InFlight)
	require.NotNil(t, st)
	require.True(t, st.Found, "%v", reasonOf(st))
	require.Equal(t, 1000.0, st.BinMS)
	require.Equal(t, int(r.WallClockMS/1000), st.Bins)
	require.Equal(t, 8.0, *st.Target)
	require.InDelta(t, 8.0, *st.Achieved, 0.1)
	require.Less(t, *st.StartMS, 0.25*r.WallClockMS)
	require.Greater(t, *st.EndMS, 0.75*r.WallClockMS)
	m := st
	require.InDelta(t, 50, *m.TTFTP50MS, 5)
	require.InDelta(t, 400, *m.E2EP50MS, 40)
	// 8 streams of 100 tokens every ~400 ms: 2,000 tok/s, 20 completions/s.
	require.InDelta(t, 2000, *m.OutputTokS, 100)
	require.InDelta(t, 20, *m.CompletionsPerS, 2)
	require.Nil(t, m.ScheduledTTFTP50MS)
}

// TestFindExcludesSlowStartAndLongTail: a cold start (slow TTFT for the
// first 5 s) and one request that runs 30 s alone at the end: the window
// starts after the one and ends before the other.
func TestFindExcludesSlowStartAndLongTail(t *testing.T) {
	j := jitter(2)
	n := 1000
	ts := closedLoop(8, n, func(i int, at float64) (float64, float64) {
		ttft, e2e := 50*j(0.2), 400*j(0.2)
		if at < 5000 {
			ttft, e2e = ttft*8, e2e+ttft*7 // cold: prefill 8 times slower
		}
		if i == n-1 {
			e2e = 30000
		}
		return ttft, e2e
	})
	r := steadyReport(8, ts, 0)
	st := OfReport(r, InFlight)
	require.True(t, st.Found, "%v", reasonOf(st))
	require.GreaterOrEqual(t, *st.StartMS, 5000.0, "the cold start is cut")
	lastOthers := 0.0
	for _, tm := range ts[:n-1] {
		lastOthers = max(lastOthers, tm.due+tm.e2e)
	}
	require.LessOrEqual(t, *st.EndMS, lastOthers, "the tail, one request alone, is cut")
	require.Greater(t, r.WallClockMS-*st.EndMS, 29000.0)
	require.InDelta(t, 50, *st.TTFTP50MS, 5, "the window's TTFT is the warm one")
	require.Greater(t, *st.OutputTokS, 1800.0)
}

// TestFindNeverSettles: a server whose TTFT grows the whole run has no
// steady window, and the reason names the trend.
func TestFindNeverSettles(t *testing.T) {
	j := jitter(3)
	ts := closedLoop(4, 600, func(_ int, at float64) (float64, float64) {
		ttft := (50 + at/100) * j(0.2)
		return ttft, ttft + 300*j(0.2)
	})
	st := OfReport(steadyReport(4, ts, 0), InFlight)
	require.False(t, st.Found)
	require.Nil(t, st.TTFTP50MS)
	require.NotNil(t, st.TTFTZ)
	require.GreaterOrEqual(t, math.Abs(*st.TTFTZ), 1.96)
	require.Contains(t, *st.Reason, "the median TTFT per bin trends (Mann-Kendall z = ")
}

// TestFindNoSuccess: a run whose requests all failed has nothing to test.
func TestFindNoSuccess(t *testing.T) {
	ts := closedLoop(2, 40, func(int, float64) (float64, float64) { return 1, 100 })
	for i := range ts {
		ts[i].fail = true
	}
	st := OfReport(steadyReport(2, ts, 0), InFlight)
	require.Equal(t, "no measured request succeeded", *st.Reason)
	require.Nil(t, OfReport(&artifact.Report{WallClockMS: 5}, InFlight), "no anvil_go.requests")
}

// openLoop is requests due every gap ms, served by a server that takes
// service ms each with slots in parallel and queues the rest in order
// (the client's cap is far above); lat is the TTFT and E2E once served.
func openLoop(n int, gap float64, slots int, lat func(i int) (ttft, e2e float64)) []timing {
	free := make([]float64, slots)
	var ts []timing
	for i := range n {
		due := float64(i) * gap
		k := 0
		for s := range free {
			if free[s] < free[k] {
				k = s
			}
		}
		ttft, e2e := lat(i)
		start := max(due, free[k])
		// The client sends at once; the server holds it queued: the wait
		// is inside the latencies.
		ts = append(ts, timing{due: due, ttft: ttft + start - due, e2e: e2e + start - due})
		free[k] = start + e2e
	}
	return ts
}

// TestFindOpenLoop: a rate the server keeps up with is steady, at the
// offered rate; one above its capacity never is (the queue grows).
func TestFindOpenLoop(t *testing.T) {
	j := jitter(4)
	lat := func(int) (float64, float64) { return 40 * j(0.2), 300 * j(0.2) }
	st := OfReport(steadyReport(1000, openLoop(600, 50, 32, lat), 0), Rate)
	require.True(t, st.Found, "%v", reasonOf(st))
	require.InDelta(t, 20, *st.Target, 0.5, "20 requests/s offered")
	require.InDelta(t, 20, *st.Achieved, 0.5)
	require.NotNil(t, st.ScheduledTTFTP50MS)

	// 32 slots of 300 ms serve ~107 requests/s; 200/s are offered.
	st = OfReport(steadyReport(1000, openLoop(2000, 5, 32, lat), 0), Rate)
	require.False(t, st.Found)
	require.Contains(t, *st.Reason, "never settled: the start and end transients (MSER) leave")
}

// TestFindOpenLoopHeldBack: a window that sent well below the offered rate
// (requests held by the in-flight cap) is not steady, whatever its trends.
func TestFindOpenLoopHeldBack(t *testing.T) {
	var ts []timing
	for i := range 400 {
		// Due every 50 ms, but the client sends only every 100 ms:
		// the wait grows without bound, and so does the scheduled TTFT.
		due := float64(i) * 50
		ts = append(ts, timing{due: due, wait: float64(i) * 50, ttft: 30, e2e: 90})
	}
	st := OfReport(steadyReport(4, ts, 0), Rate)
	require.False(t, st.Found)
	require.NotNil(t, st.Achieved)
	require.Less(t, *st.Achieved, 0.9**st.Target)
}

// reasonOf is st's reason, "" when none.
func reasonOf(st *artifact.Steady) string {
	if st.Reason == nil {
		return ""
	}
	return *st.Reason
}

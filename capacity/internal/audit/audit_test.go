package audit

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/stretchr/testify/require"
)

// TestJudge: the rule on synthetic measurements, one limit at a time, at
// and just below it, and all at once in the documented order.
func TestJudge(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    artifact.Audit
		want []string
	}{
		{"nothing measured", artifact.Audit{}, nil},
		{"quiet", artifact.Audit{SchedLatencyP99MS: new(0.05), SchedLatencyMaxMS: new(30.0), SchedSamples: 900, GCPauseMaxMS: new(0.2),
			WakeLagP50MS: new(1.05), WakeLagP99MS: new(12.6), WakeSamples: 37,
			CPUShare: new(0.4), SendLagP99MS: new(0.1), PoolWaits: 1, PoolWaitMaxMS: new(0.5)}, nil},
		{"the scheduler's latency is recorded, not judged: quiet runs' p99", artifact.Audit{SchedLatencyP99MS: new(2.62), SchedLatencyMaxMS: new(30.0), SchedSamples: 900}, nil},
		{"wake-ups late", artifact.Audit{WakeLagP50MS: new(16.8), WakeLagP99MS: new(201.0), WakeSamples: 45},
			[]string{"scheduler latency: the client's wake-ups ran 16.8 ms late at the median (p99 201 ms): timings below ~17 ms resolution are not trustworthy"}},
		{"the median of 9 wake-ups is a delay or two", artifact.Audit{WakeLagP50MS: new(4.19), WakeLagP99MS: new(4.19), WakeSamples: 9}, nil},
		{"wake-ups at the limit", artifact.Audit{WakeLagP50MS: new(2.0), WakeLagP99MS: new(2.0), WakeSamples: 10},
			[]string{"scheduler latency: the client's wake-ups ran 2 ms late at the median (p99 2 ms): timings below ~2 ms resolution are not trustworthy"}},
		{"the machine delayed a quiet client", artifact.Audit{WakeLagP50MS: new(6.29), WakeLagP99MS: new(117.0), WakeSamples: 45, HeldWakeLagP90MS: new(0.393), HeldWakeLagMaxMS: new(0.655)},
			[]string{"scheduler latency: the client's wake-ups ran 6.29 ms late at the median (p99 117 ms): timings below ~6.3 ms resolution are not trustworthy; the client's own work held them up by only 0.393 ms at the p90: other processes on the machine delayed it"}},
		{"wake-ups just below", artifact.Audit{WakeLagP50MS: new(1.99), WakeLagP99MS: new(40.0), WakeSamples: 500}, nil},
		{"intermittent stalls", artifact.Audit{HeldWakeLagP90MS: new(7.34), HeldWakeLagMaxMS: new(14.7), WakeLagP50MS: new(0.79), WakeSamples: 215},
			[]string{"intermittent stalls: the client's own work held its processors while its wake-ups were due, one in ten by 7.34 ms or more, up to 14.7 ms: timings are uncertain by up to ~15 ms"}},
		{"stalls at the limit", artifact.Audit{HeldWakeLagP90MS: new(2.0), HeldWakeLagMaxMS: new(2.0), WakeSamples: 10},
			[]string{"intermittent stalls: the client's own work held its processors while its wake-ups were due, one in ten by 2 ms or more, up to 2 ms: timings are uncertain by up to ~2 ms"}},
		{"stalls just below", artifact.Audit{HeldWakeLagP90MS: new(1.99), HeldWakeLagMaxMS: new(30.0), WakeSamples: 500}, nil},
		{"the p90 of 9 wake-ups", artifact.Audit{HeldWakeLagP90MS: new(9.0), WakeSamples: 9}, nil},
		{"a loaded machine's quiet client", artifact.Audit{WakeLagP50MS: new(1.57), WakeLagP99MS: new(117.0), HeldWakeLagP90MS: new(0.58), HeldWakeLagMaxMS: new(0.92), WakeSamples: 207}, nil},
		{"gc", artifact.Audit{GCPauseMaxMS: new(12.0)}, []string{"a GC pause of up to 12 ms stopped every stream's clock at once"}},
		{"gc below", artifact.Audit{GCPauseMaxMS: new(9.99)}, nil},
		{"cpu", artifact.Audit{CPUShare: new(0.95), GOMAXPROCS: 2},
			[]string{"the client used 95% of GOMAXPROCS=2: it was CPU-bound and its stamps wait for a processor"}},
		{"cpu below", artifact.Audit{CPUShare: new(0.89)}, nil},
		{"send lag", artifact.Audit{SendLagP99MS: new(2.5)},
			[]string{"open-loop send lag p99 2.5 ms: requests left later than scheduled while the in-flight cap allowed them"}},
		{"pool", artifact.Audit{PoolWaits: 3, PoolWaitMaxMS: new(7.0)},
			[]string{"3 requests waited for a pooled connection, up to 7 ms: their timings include the client's own queue"}},
		{"all", artifact.Audit{SchedLatencyP99MS: new(2.0), SchedSamples: 100, WakeLagP50MS: new(5.0), WakeLagP99MS: new(9.5), WakeSamples: 10,
			HeldWakeLagP90MS: new(9.0), HeldWakeLagMaxMS: new(9.5), GCPauseMaxMS: new(10.0), CPUShare: new(1.0), GOMAXPROCS: 4,
			SendLagP99MS: new(1.0), PoolWaits: 1, PoolWaitMaxMS: new(1.0)}, []string{
			"scheduler latency: the client's wake-ups ran 5 ms late at the median (p99 9.5 ms): timings below ~5 ms resolution are not trustworthy",
			"intermittent stalls: the client's own work held its processors while its wake-ups were due, one in ten by 9 ms or more, up to 9.5 ms: timings are uncertain by up to ~9.5 ms",
			"a GC pause of up to 10 ms stopped every stream's clock at once",
			"the client used 100% of GOMAXPROCS=4: it was CPU-bound and its stamps wait for a processor",
			"open-loop send lag p99 1 ms: requests left later than scheduled while the in-flight cap allowed them",
			"1 requests waited for a pooled connection, up to 1 ms: their timings include the client's own queue",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireJudged(t, tc.a, Resolution{}, tc.want)
		})
	}
}

// requireJudged judges a against r: ok with no reasons when want is nil,
// else suspect with exactly want.
func requireJudged(t *testing.T, a artifact.Audit, r Resolution, want []string) {
	t.Helper()
	Judge(&a, r)
	if want == nil {
		require.Equal(t, "ok", a.Verdict)
		require.Equal(t, []string{}, a.Reasons)
		return
	}
	require.Equal(t, "suspect", a.Verdict)
	require.Equal(t, want, a.Reasons)
}

// TestJudgeRelative: with the run's own timings known, each limit is
// max(its floor, relativeShare x the timing it distorts): a wait that is
// nothing beside a TTFT of seconds is ok, one of 20 % of it is suspect, a
// stall stays suspect beside gaps it stretches, and the floors hold under
// fast timings.
func TestJudgeRelative(t *testing.T) {
	ollama := Resolution{TTFT: 8 * time.Second, Gap: 45 * time.Millisecond, GapOf: "inter-chunk gap"}
	fast := Resolution{TTFT: 5 * time.Millisecond, Gap: time.Millisecond, GapOf: "TPOT"}
	for _, tc := range []struct {
		name string
		a    artifact.Audit
		r    Resolution
		want []string
	}{
		{"ollama: a 2.21 ms pool wait beside an 8 s TTFT", artifact.Audit{PoolWaits: 1, PoolWaitMaxMS: new(2.21)}, ollama, nil},
		{"a pool wait of 20 % of TTFT", artifact.Audit{PoolWaits: 2, PoolWaitMaxMS: new(1600.0)}, ollama,
			[]string{"2 requests waited for a pooled connection, up to 1.6e+03 ms: their timings include the client's own queue (20% of the run's TTFT p50 of 8000 ms)"}},
		{"a pool wait just under a tenth of TTFT", artifact.Audit{PoolWaits: 2, PoolWaitMaxMS: new(799.0)}, ollama, nil},
		{"send lag beside an 8 s TTFT", artifact.Audit{SendLagP99MS: new(2.5)}, ollama, nil},
		{"send lag of a tenth of TTFT", artifact.Audit{SendLagP99MS: new(800.0)}, ollama,
			[]string{"open-loop send lag p99 800 ms: requests left later than scheduled while the in-flight cap allowed them (10% of the run's TTFT p50 of 8000 ms)"}},
		{"held processor: wake-ups stay suspect beside the gaps", artifact.Audit{WakeLagP50MS: new(16.8), WakeLagP99MS: new(201.0), WakeSamples: 45}, ollama,
			[]string{"scheduler latency: the client's wake-ups ran 16.8 ms late at the median (p99 201 ms): timings below ~17 ms resolution are not trustworthy (37% of the run's inter-chunk gap p50 of 45 ms)"}},
		{"gc floor holds beside the gaps", artifact.Audit{GCPauseMaxMS: new(12.0)}, ollama,
			[]string{"a GC pause of up to 12 ms stopped every stream's clock at once (27% of the run's inter-chunk gap p50 of 45 ms)"}},
		{"gc below its floor", artifact.Audit{GCPauseMaxMS: new(9.99)}, ollama, nil},
		{"gc under a tenth of long gaps", artifact.Audit{GCPauseMaxMS: new(12.0)}, Resolution{Gap: 200 * time.Millisecond, GapOf: "TPOT"}, nil},
		{"fast: 2 ms stalls beside 1 ms TPOTs", artifact.Audit{HeldWakeLagP90MS: new(2.0), HeldWakeLagMaxMS: new(4.0), WakeSamples: 100}, fast,
			[]string{"intermittent stalls: the client's own work held its processors while its wake-ups were due, one in ten by 2 ms or more, up to 4 ms: timings are uncertain by up to ~4 ms (200% of the run's TPOT p50 of 1 ms)"}},
		{"fast: the pool floor holds under a 5 ms TTFT", artifact.Audit{PoolWaits: 1, PoolWaitMaxMS: new(1.5)}, fast,
			[]string{"1 requests waited for a pooled connection, up to 1.5 ms: their timings include the client's own queue (30% of the run's TTFT p50 of 5 ms)"}},
		{"fast: below the floors", artifact.Audit{SchedLatencyP99MS: new(1.999), SchedSamples: 900, HeldWakeLagP90MS: new(1.99), WakeSamples: 900, PoolWaits: 1, PoolWaitMaxMS: new(0.9)}, fast, nil},
		{"stalls beside the gaps they stretch", artifact.Audit{HeldWakeLagP90MS: new(6.29), HeldWakeLagMaxMS: new(14.7), WakeSamples: 200}, ollama,
			[]string{"intermittent stalls: the client's own work held its processors while its wake-ups were due, one in ten by 6.29 ms or more, up to 14.7 ms: timings are uncertain by up to ~15 ms (14% of the run's inter-chunk gap p50 of 45 ms)"}},
		{"stalls under a tenth of long gaps", artifact.Audit{HeldWakeLagP90MS: new(6.29), HeldWakeLagMaxMS: new(14.7), WakeSamples: 200}, Resolution{Gap: 200 * time.Millisecond, GapOf: "TPOT"}, nil},
		{"cpu is a share already", artifact.Audit{CPUShare: new(0.95), GOMAXPROCS: 2}, ollama,
			[]string{"the client used 95% of GOMAXPROCS=2: it was CPU-bound and its stamps wait for a processor"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireJudged(t, tc.a, tc.r, tc.want)
		})
	}
}

// TestStopInputs: the engine's inputs become the send lag's p99 and max
// and the pool waits at or above poolWaitFloor.
func TestStopInputs(t *testing.T) {
	lags := make([]time.Duration, 200)
	for i := range lags {
		lags[i] = time.Duration(i) * 10 * time.Microsecond // 0 .. 1.99 ms
	}
	a := Start(t.Context()).Stop(Inputs{SendLags: lags,
		ConnWaits: []time.Duration{time.Microsecond, poolWaitFloor, 3 * time.Millisecond, 50 * time.Microsecond}})
	require.Equal(t, 1.97, *a.SendLagP99MS, "nearest rank 198 of 200")
	require.Equal(t, 1.99, *a.SendLagMaxMS)
	require.Equal(t, 2, a.PoolWaits)
	require.Equal(t, 3.0, *a.PoolWaitMaxMS)
	require.Contains(t, a.Reasons, "open-loop send lag p99 1.97 ms: requests left later than scheduled while the in-flight cap allowed them")
	require.Equal(t, runtime.GOMAXPROCS(0), a.GOMAXPROCS)

	closed := Start(t.Context()).Stop(Inputs{})
	require.Nil(t, closed.SendLagP99MS, "a closed loop has no send lag")
	require.Nil(t, closed.PoolWaitMaxMS)
}

// hog keeps procs goroutines busy for work iterations each (bounded by
// the count of work done, not by time); every 1<<14 iterations each wakes
// a goroutine that then waits for a processor, as a stream's reader waits
// for its stamp when the client is overloaded. It returns the wakes.
func hog(procs, work int) int {
	pings := make(chan struct{}, 1)
	woken := make(chan int)
	go func() {
		n := 0
		for range pings {
			n++
		}
		woken <- n
	}()
	var wg sync.WaitGroup
	for g := range procs {
		wg.Go(func() {
			x := uint64(g + 1)
			for i := range work {
				x = x*6364136223846793005 + 1442695040888963407
				if i&(1<<14-1) == 0 {
					select {
					case pings <- struct{}{}:
					default:
					}
				}
			}
			if x == 0 {
				panic("unreachable: keeps the loop")
			}
		})
	}
	wg.Wait()
	close(pings)
	return <-woken
}

// TestStalledClientMeasured: beside GOMAXPROCS+1 busy goroutines, the
// goroutines the run wakes are scheduler samples, the probe's wake-ups
// are measured, and the verdict follows the rule from what was measured
// (a suspect verdict names the scheduler first). In this process the
// busy goroutines share the processors with whatever else go test runs,
// so the verdict itself is BenchmarkStalledClientAudit's metric; the
// stall that cannot be missed is TestStalledClient's, in a child process
// with one processor, and the rule is tested exactly on synthetic inputs
// (TestJudge).
func TestStalledClientMeasured(t *testing.T) {
	if testing.Short() {
		t.Skip("keeps every processor busy for a while")
	}
	a := stalledRun(t)
	require.Positive(t, a.SchedSamples)
	require.NotNil(t, a.SchedLatencyP99MS)
	require.Positive(t, a.WakeSamples)
	require.NotNil(t, a.WakeLagP50MS)
	again := *a
	Judge(&again, Resolution{})
	require.Equal(t, again.Verdict, a.Verdict, "the verdict is the rule's on the measured values")
	require.Equal(t, again.Reasons, a.Reasons)
	if a.Verdict == "suspect" {
		require.NotEmpty(t, a.Reasons)
	}
}

// BenchmarkStalledClientAudit audits a run beside GOMAXPROCS+1 busy
// goroutines per iteration and reports how often the audit saw it:
// suspect-share (1 when every stalled run was judged suspect with a
// scheduler reason first), and the means of the scheduler latency p99 and
// of the probe's median wake-up lag.
func BenchmarkStalledClientAudit(b *testing.B) {
	suspect, p99, wake, n := 0, 0.0, 0.0, 0
	for b.Loop() {
		a := stalledRun(b)
		n++
		if a.Verdict == "suspect" && len(a.Reasons) > 0 && strings.HasPrefix(a.Reasons[0], "scheduler latency") {
			suspect++
		}
		if a.SchedLatencyP99MS != nil {
			p99 += *a.SchedLatencyP99MS
		}
		if a.WakeLagP50MS != nil {
			wake += *a.WakeLagP50MS
		}
	}
	b.ReportMetric(float64(suspect)/float64(n), "suspect-share")
	b.ReportMetric(p99/float64(n), "sched-p99-ms")
	b.ReportMetric(wake/float64(n), "wake-p50-ms")
}

// stalledRun audits the wake-ups of a goroutine beside GOMAXPROCS+1 busy
// goroutines.
func stalledRun(t testing.TB) *artifact.Audit {
	rec := Start(t.Context())
	wakes := hog(runtime.GOMAXPROCS(0)+1, 160_000_000) // a phase of some 0.5 s: 10 wake-ups and more
	a := rec.Stop(Inputs{})
	t.Logf("wakes %d, sched samples %d, wake-ups %d, audit %+v", wakes, a.SchedSamples, a.WakeSamples, a.Reasons)
	return a
}

// TestQuietClientMeasured: a run of sequential requests to a local server
// is measured: the requests' wake-ups are scheduler samples, the CPU share
// is read. Its verdict is not asserted: on the real clock it depends on
// what else the machine runs (go test runs packages in parallel), and the
// rule is tested exactly on synthetic inputs (TestJudge); how often a
// quiet run is ok is BenchmarkQuietClientAudit's metric.
func TestQuietClientMeasured(t *testing.T) {
	a := quietRun(t)
	require.Contains(t, []string{"ok", "suspect"}, a.Verdict)
	require.Positive(t, a.SchedSamples)
	require.NotNil(t, a.SchedLatencyP99MS)
	require.Equal(t, runtime.GOMAXPROCS(0), a.GOMAXPROCS)
}

// BenchmarkQuietClientAudit audits a quiet run of 200 sequential requests
// per iteration and reports the accuracy of the verdict on this machine:
// suspect-share (0 when every quiet run was judged ok), the means of the
// scheduler latency p99, the CPU share and the probe's median wake-up lag.
func BenchmarkQuietClientAudit(b *testing.B) {
	suspect, p99, cpu, wake, n := 0, 0.0, 0.0, 0.0, 0
	for b.Loop() {
		a := quietRun(b)
		if a.WakeLagP50MS != nil {
			wake += *a.WakeLagP50MS
		}
		n++
		if a.Verdict == "suspect" {
			suspect++
			b.Log(a.Reasons)
		}
		if a.SchedLatencyP99MS != nil {
			p99 += *a.SchedLatencyP99MS
		}
		if a.CPUShare != nil {
			cpu += *a.CPUShare
		}
	}
	b.ReportMetric(float64(suspect)/float64(n), "suspect-share")
	b.ReportMetric(p99/float64(n), "sched-p99-ms")
	b.ReportMetric(cpu/float64(n), "cpu-share")
	b.ReportMetric(wake/float64(n), "wake-p50-ms")
}

// quietRun audits 200 sequential requests to a local server, nothing else
// busy in the process.
func quietRun(t testing.TB) *artifact.Audit {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "data: {}\n\n")
	}))
	defer srv.Close()
	hc := srv.Client()
	rec := Start(t.Context())
	for range 200 {
		resp, err := hc.Get(srv.URL)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return rec.Stop(Inputs{})
}

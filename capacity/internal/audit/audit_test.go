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
		{"quiet", artifact.Audit{SchedLatencyP99MS: new(0.05), SchedLatencyMaxMS: new(30.0), GCPauseMaxMS: new(0.2),
			CPUShare: new(0.4), SendLagP99MS: new(0.1), PoolWaits: 1, PoolWaitMaxMS: new(0.5)}, nil},
		{"scheduler just below", artifact.Audit{SchedLatencyP99MS: new(0.999)}, nil},
		{"scheduler", artifact.Audit{SchedLatencyP99MS: new(4.1)},
			[]string{"scheduler latency p99 4.1 ms: timings below ~4.1 ms resolution are not trustworthy"}},
		{"scheduler at the limit", artifact.Audit{SchedLatencyP99MS: new(1.0)},
			[]string{"scheduler latency p99 1 ms: timings below ~1 ms resolution are not trustworthy"}},
		{"gc", artifact.Audit{GCPauseMaxMS: new(12.0)}, []string{"a GC pause of up to 12 ms stopped every stream's clock at once"}},
		{"gc below", artifact.Audit{GCPauseMaxMS: new(9.99)}, nil},
		{"cpu", artifact.Audit{CPUShare: new(0.95), GOMAXPROCS: 2},
			[]string{"the client used 95% of GOMAXPROCS=2: it was CPU-bound and its stamps wait for a processor"}},
		{"cpu below", artifact.Audit{CPUShare: new(0.89)}, nil},
		{"send lag", artifact.Audit{SendLagP99MS: new(2.5)},
			[]string{"open-loop send lag p99 2.5 ms: requests left later than scheduled while the in-flight cap allowed them"}},
		{"pool", artifact.Audit{PoolWaits: 3, PoolWaitMaxMS: new(7.0)},
			[]string{"3 requests waited for a pooled connection, up to 7 ms: their timings include the client's own queue"}},
		{"all", artifact.Audit{SchedLatencyP99MS: new(2.0), GCPauseMaxMS: new(10.0), CPUShare: new(1.0), GOMAXPROCS: 4,
			SendLagP99MS: new(1.0), PoolWaits: 1, PoolWaitMaxMS: new(1.0)}, []string{
			"scheduler latency p99 2 ms: timings below ~2 ms resolution are not trustworthy",
			"a GC pause of up to 10 ms stopped every stream's clock at once",
			"the client used 100% of GOMAXPROCS=4: it was CPU-bound and its stamps wait for a processor",
			"open-loop send lag p99 1 ms: requests left later than scheduled while the in-flight cap allowed them",
			"1 requests waited for a pooled connection, up to 1 ms: their timings include the client's own queue",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.a
			Judge(&a)
			if tc.want == nil {
				require.Equal(t, "ok", a.Verdict)
				require.Equal(t, []string{}, a.Reasons)
				return
			}
			require.Equal(t, "suspect", a.Verdict)
			require.Equal(t, tc.want, a.Reasons)
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
	a := Start().Stop(Inputs{SendLags: lags,
		ConnWaits: []time.Duration{time.Microsecond, poolWaitFloor, 3 * time.Millisecond, 50 * time.Microsecond}})
	require.Equal(t, 1.97, *a.SendLagP99MS, "nearest rank 198 of 200")
	require.Equal(t, 1.99, *a.SendLagMaxMS)
	require.Equal(t, 2, a.PoolWaits)
	require.Equal(t, 3.0, *a.PoolWaitMaxMS)
	require.Contains(t, a.Reasons, "open-loop send lag p99 1.97 ms: requests left later than scheduled while the in-flight cap allowed them")
	require.Equal(t, runtime.GOMAXPROCS(0), a.GOMAXPROCS)

	closed := Start().Stop(Inputs{})
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
// goroutines the run wakes are scheduler samples and the verdict follows
// the rule from what was measured (a suspect verdict names the scheduler
// first). Whether the stall is seen on the real clock depends on what else
// the machine runs (go test runs packages in parallel, and the operating
// system time-slices the busy threads), so the verdict itself is
// BenchmarkStalledClientAudit's metric, and the rule is tested exactly on
// synthetic inputs (TestJudge).
func TestStalledClientMeasured(t *testing.T) {
	if testing.Short() {
		t.Skip("keeps every processor busy for a while")
	}
	a := stalledRun(t)
	require.Positive(t, a.SchedSamples)
	require.NotNil(t, a.SchedLatencyP99MS)
	again := *a
	Judge(&again)
	require.Equal(t, again.Verdict, a.Verdict, "the verdict is the rule's on the measured values")
	require.Equal(t, again.Reasons, a.Reasons)
	if a.Verdict == "suspect" {
		require.NotEmpty(t, a.Reasons)
	}
}

// BenchmarkStalledClientAudit audits a run beside GOMAXPROCS+1 busy
// goroutines per iteration and reports how often the audit saw it:
// suspect-share (1 when every stalled run was judged suspect) and the
// mean scheduler latency p99.
func BenchmarkStalledClientAudit(b *testing.B) {
	suspect, p99, n := 0, 0.0, 0
	for b.Loop() {
		a := stalledRun(b)
		n++
		if a.Verdict == "suspect" && len(a.Reasons) > 0 && strings.HasPrefix(a.Reasons[0], "scheduler latency p99 ") {
			suspect++
		}
		if a.SchedLatencyP99MS != nil {
			p99 += *a.SchedLatencyP99MS
		}
	}
	b.ReportMetric(float64(suspect)/float64(n), "suspect-share")
	b.ReportMetric(p99/float64(n), "sched-p99-ms")
}

// stalledRun audits the wake-ups of a goroutine beside GOMAXPROCS+1 busy
// goroutines.
func stalledRun(t testing.TB) *artifact.Audit {
	rec := Start()
	wakes := hog(runtime.GOMAXPROCS(0)+1, 40_000_000)
	a := rec.Stop(Inputs{})
	t.Logf("wakes %d, audit %+v", wakes, a.Reasons)
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
// suspect-share (0 when every quiet run was judged ok), the mean of the
// scheduler latency p99 and the CPU share.
func BenchmarkQuietClientAudit(b *testing.B) {
	suspect, p99, cpu, n := 0, 0.0, 0.0, 0
	for b.Loop() {
		a := quietRun(b)
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
}

// quietRun audits 200 sequential requests to a local server, nothing else
// busy in the process.
func quietRun(t testing.TB) *artifact.Audit {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "data: {}\n\n")
	}))
	defer srv.Close()
	hc := srv.Client()
	rec := Start()
	for range 200 {
		resp, err := hc.Get(srv.URL)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return rec.Stop(Inputs{})
}

package capacity_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/servermetrics"
	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// manySeriesHandler is fake's API, its /metrics followed by n series of a
// family no engine curates: a server exposing, say, a series per request.
func manySeriesHandler(fake *fakeserver.Server, n int) http.Handler {
	var extra bytes.Buffer
	extra.WriteString("# HELP http_request_last_seconds Per-request series.\n# TYPE http_request_last_seconds gauge\n")
	for i := range n {
		fmt.Fprintf(&extra, "http_request_last_seconds{engine=\"0\",request_id=\"cmpl-%06d\"} %d.0\n", i, i%97)
	}
	h := fake.Handler()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		w.Header().Set("Content-Type", rec.Header().Get("Content-Type"))
		w.Write(rec.Body.Bytes())
		w.Write(extra.Bytes())
	})
	mux.Handle("/", h)
	return mux
}

// envManySeries makes TestManySeriesServer the server of
// BenchmarkRunBeside100kSeries: it serves manySeriesHandler of that many
// series and prints its URL.
const envManySeries = "ANVIL_BENCH_MANY_SERIES"

// TestManySeriesServer is the server process of
// BenchmarkRunBeside100kSeries: it serves until its standard input
// closes.
func TestManySeriesServer(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv(envManySeries))
	if err != nil {
		t.Skip("the server process of BenchmarkRunBeside100kSeries")
	}
	fake := fakeserver.NewInMemory(fakeserver.Fast())
	defer fake.Close()
	srv := httptest.NewServer(manySeriesHandler(fake, n))
	defer srv.Close()
	fmt.Println(srv.URL)
	io.Copy(io.Discard, os.Stdin)
}

// withManySeries starts TestManySeriesServer with n series in a process
// of its own, so that writing its page costs the benchmark's process
// nothing: what sampler=on costs is the client's alone.
func withManySeries(b *testing.B, n int) string {
	cmd := exec.Command(os.Args[0], "-test.run=^TestManySeriesServer$", "-test.count=1")
	cmd.Env = append(os.Environ(), envManySeries+"="+strconv.Itoa(n))
	stdin, err := cmd.StdinPipe()
	require.NoError(b, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(b, err)
	require.NoError(b, cmd.Start())
	b.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	url, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(b, err)
	return strings.TrimSpace(url)
}

// nearestRank returns the q quantile of ms (nearest rank).
func nearestRank(ms []float64, q float64) float64 {
	s := slices.Sorted(slices.Values(ms))
	i := int(q*float64(len(s))+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// BenchmarkRunBeside100kSeries: a capacity run against the fake over
// loopback whose /metrics has 100,000 series beside vLLM's curated
// families, sampled every second, the default (sampler=on), or not at all
// (sampler=off).
// The sampler must cost the run nothing: compare the two with
//
//	go test ./capacity -run '^$' -bench RunBeside100kSeries -count 6 | benchstat -col /sampler -
//
// ttft-p50/p90/p99 and e2e-p90 are the run's own percentiles of its
// requests (ms), phase-ms the measured phase (wall_clock_ms, what the
// throughputs divide by), run-ms the whole capacity.Run (the discovery and
// the first and last samples, three GETs of the page on the run's
// goroutine, before and after the phase, included), samples and
// failed-samples the /metrics samples taken and failed, per run. The
// server runs in a process of its own (withManySeries): writing the 7 MB
// page is the server's cost, reading it the client's.
func BenchmarkRunBeside100kSeries(b *testing.B) {
	url := withManySeries(b, 100_000)
	w := capacity.Workload{Requests: 400, Concurrency: 4, ContextTokens: 256}
	for _, on := range []bool{false, true} {
		name := "sampler=off"
		target := capacity.Target{BaseURL: url + "/v1", MetricsURL: servermetrics.Off}
		if on {
			name = "sampler=on"
			target.MetricsURL = "" // the default: /metrics, every second
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var ttft, e2e, run, phase []float64
			samples, failed := 0, 0
			for b.Loop() {
				t0 := time.Now()
				rep, err := capacity.Run(context.Background(), target, w)
				run = append(run, float64(time.Since(t0))/float64(time.Millisecond))
				if err != nil || rep.Completed != w.Requests {
					b.Fatalf("%v: %d completed", err, rep.Completed)
				}
				if m := rep.AnvilGo.ServerMetrics; on && (m == nil || m.Samples < 3) {
					b.Fatalf("server metrics: %+v", m)
				} else if on {
					samples += m.Samples
					failed += m.Failed
				}
				phase = append(phase, rep.WallClockMS)
				for _, r := range rep.RequestTimings {
					ttft = append(ttft, r.TimeToFirstOutputMS)
					e2e = append(e2e, r.E2EMS)
				}
			}
			b.ReportMetric(nearestRank(ttft, 0.5), "ttft-p50-ms")
			b.ReportMetric(nearestRank(ttft, 0.9), "ttft-p90-ms")
			b.ReportMetric(nearestRank(ttft, 0.99), "ttft-p99-ms")
			b.ReportMetric(nearestRank(e2e, 0.9), "e2e-p90-ms")
			b.ReportMetric(nearestRank(run, 0.5), "run-ms")
			b.ReportMetric(nearestRank(phase, 0.5), "phase-ms")
			b.ReportMetric(float64(samples)/float64(b.N), "samples")
			b.ReportMetric(float64(failed)/float64(b.N), "failed-samples")
		})
	}
}

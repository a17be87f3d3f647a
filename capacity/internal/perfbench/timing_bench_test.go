//go:build unix

package perfbench

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/artifact"
)

// BenchmarkTimingError measures the client's TTFT and TPOT against a server
// in another process with an exact schedule (TTFT 50 ms, one chunk every
// 5 ms, 20 chunks), at concurrency 1, 64, 256 and 1024: the error of a
// request is its TTFT minus 50 ms (what the client adds: connection,
// request transfer, delivery, parsing, scheduling) and its TPOT minus 5 ms.
// Each run first warms as many connections as it keeps in flight.
// Reported: p50, p95 and max of the errors in ms.
func BenchmarkTimingError(b *testing.B) {
	const ttft, gap, chunks = 50 * time.Millisecond, 5 * time.Millisecond, 20
	base := startServer(b, Schedule{TTFT: ttft, Gap: gap, Chunks: chunks, PromptTokens: 64})
	for _, c := range []int{1, 64, 256, 1024} {
		b.Run("c="+itoa(c), func(b *testing.B) {
			if _, err := (capacity.Workload{Concurrency: c}).Resolved(); err != nil {
				b.Skipf("concurrency %d: %v", c, err)
			}
			t := capacity.Target{BaseURL: base, Model: "perf", MaxModelLen: 1 << 20}
			w := capacity.Workload{Requests: 2 * c, Concurrency: c, Warmup: c, ContextTokens: 64,
				SharedPrefixTokens: capacity.None, MaxTokens: chunks}
			var ttftErr, tpotErr []float64
			for b.Loop() {
				rep, err := capacity.Run(b.Context(), t, w)
				require.NoError(b, err)
				require.Empty(b, rep.Failures)
				for _, row := range rep.RequestTimings {
					ttftErr = append(ttftErr, row.TTFTMS-float64(ttft)/1e6)
					if row.TPOTMS != nil {
						tpotErr = append(tpotErr, *row.TPOTMS-float64(gap)/1e6)
					}
				}
			}
			reportQuantiles(b, "ttft-err", ttftErr)
			reportQuantiles(b, "tpot-err", tpotErr)
		})
	}
}

// reportQuantiles reports the nearest-rank p50 and p95 and the max of xs.
func reportQuantiles(b *testing.B, name string, xs []float64) {
	if len(xs) == 0 {
		return
	}
	slices.Sort(xs)
	rank := func(p float64) float64 { return xs[max(0, int(math.Ceil(p*float64(len(xs))/100))-1)] }
	b.ReportMetric(rank(50), name+"-p50-ms")
	b.ReportMetric(rank(95), name+"-p95-ms")
	b.ReportMetric(xs[len(xs)-1], name+"-max-ms")
}

// The server's first write of a response, in BenchmarkOwnError: due 50 ms
// after its request's body was read, then 20 events 5 ms apart.
const (
	ownTTFT   = 50 * time.Millisecond
	ownGap    = 5 * time.Millisecond
	ownChunks = 20
)

// BenchmarkOwnError measures the client's own share of its TTFT error,
// apart from the server's: against a server in another process that
// records, per measured request, the instant its handler began and the
// instant immediately before the write of the response's first byte
// (Record), each matched to the client's row by the request index the
// prompt carries (RequestIndex). Per request:
//
//   - own error = the client's first-content stamp - the server's first
//     write: the delivery, the wake-up, the reading and the decoding of
//     the first event, everything the client adds after the server wrote;
//   - lead = the server's handler start - t0: the request's writing, its
//     transfer, and the server's accepting and parsing of it (what t0 is
//     ahead of the server's own start);
//   - server late = the server's first write - its due instant: the
//     server's own lag (its process shares the machine's cores), reported
//     to show when the machine itself was the bottleneck.
//
// One clock: both processes read CLOCK_REALTIME (time.Now().UnixNano()).
// The client's stamps are offsets on its monotonic clock from its run's
// start, whose wall reading is started_at_unix_ns (one time.Now gives both
// readings), so a stamp's wall instant is started_at_unix_ns + its
// offset. That is exact to the tens of nanoseconds between time.Now's two
// clock reads: on Linux CLOCK_MONOTONIC and CLOCK_REALTIME advance at one
// rate (NTP slews both alike) and differ only by a step of the wall
// clock, which each run checks for (wall elapsed - monotonic elapsed over
// the run, at most 50 us) and fails on. An own error below -50 us would
// mean the clocks disagree, and fails the run too.
//
// Dispatch: burst (the closed loop: c workers, all leaving at once) and
// paced (an open loop with constant arrivals at c / 150 ms, the stream's
// length, so that about c are in flight with a cap of c), at c = 1, 64,
// 256 and 1024, max(2c, 20) measured requests a run after c warm-up
// requests. Reported: the medians over the runs of each run's nearest-rank
// p50, p95 and p99, in ms. In a burst, each run is followed by one of the
// minimal reader (FloorFirstLines: net/http and a line scan, stamping its
// first data line) with as many workers and requests against the same
// server: floor-own-err-p50-ms and floor-own-err-p95-ms are its own error,
// own-err-floor-ratio the client's p95 over the floor's.
//
// The server's first write is stamped before and after it: the bytes
// left in between, and a stamp of their arrival by the kernel (package
// rxstamp) can fall anywhere in it. server-write-p95-ms is how long that
// write took (p95), which the own error cannot tell from the client's,
// and own-err-past-write-p95-ms the own error counted from the write's
// return instead: what is the client's alone for certain.
func BenchmarkOwnError(b *testing.B) {
	base := startServer(b, Schedule{TTFT: ownTTFT, Gap: ownGap, Chunks: ownChunks, PromptTokens: 64})
	for _, paced := range []bool{false, true} {
		for _, c := range []int{1, 64, 256, 1024} {
			name := "burst/c=" + itoa(c)
			if paced {
				name = "paced/c=" + itoa(c)
			}
			b.Run(name, func(b *testing.B) { ownError(b, base, c, paced) })
		}
	}
}

// maxClockStep is the most the wall clock may move against the monotonic
// clock during a run of BenchmarkOwnError, and the most negative own error
// it accepts.
const maxClockStep = 50 * time.Microsecond

func ownError(b *testing.B, base string, c int, paced bool) {
	if _, err := (capacity.Workload{Concurrency: c}).Resolved(); err != nil {
		b.Skipf("concurrency %d: %v", c, err)
	}
	t := capacity.Target{BaseURL: base, Model: "perf", MaxModelLen: 1 << 20}
	w := capacity.Workload{Requests: max(2*c, 20), Concurrency: c, Warmup: c, ContextTokens: 64,
		SharedPrefixTokens: capacity.None, MaxTokens: ownChunks}
	if paced {
		w.Rate = float64(c) / (ownTTFT + ownChunks*ownGap).Seconds()
		w.Arrival = capacity.ArrivalProcess("constant")
	}
	quantiles := []float64{50, 95, 99}
	perRun := map[string][]float64{} // metric -> one value per run
	// The floor's reader, in a burst: as many workers, the same requests.
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c, MaxIdleConns: c}}
	defer hc.CloseIdleConnections()
	floorBody := func(i int) []byte {
		return []byte(`{"model":"perf","messages":[{"role":"user","content":"\n# request ` + strconv.Itoa(i) + `: count"}],"stream":true}`)
	}
	for b.Loop() {
		e := ownErrorRun(b, base, t, w)
		own := e.own
		for _, q := range quantiles {
			p := strconvFloat(q)
			perRun["own-err-p"+p+"-ms"] = append(perRun["own-err-p"+p+"-ms"], nearestRank(own, q))
			perRun["lead-p"+p+"-ms"] = append(perRun["lead-p"+p+"-ms"], nearestRank(e.lead, q))
		}
		perRun["server-late-p95-ms"] = append(perRun["server-late-p95-ms"], nearestRank(e.late, 95))
		perRun["server-write-p95-ms"] = append(perRun["server-write-p95-ms"], nearestRank(e.write, 95))
		perRun["own-err-past-write-p95-ms"] = append(perRun["own-err-past-write-p95-ms"], nearestRank(e.pastWrite, 95))
		if !paced {
			floor, err := floorOwnError(b, hc, base+"/chat/completions", floorBody, w.Requests, c)
			if err != nil {
				// A loaded machine can drop the floor's fresh connections
				// (it warms none, as the client does): that run has no
				// floor figure, and says why.
				b.Logf("the floor's run failed: %v", err)
				continue
			}
			perRun["floor-own-err-p50-ms"] = append(perRun["floor-own-err-p50-ms"], nearestRank(floor, 50))
			perRun["floor-own-err-p95-ms"] = append(perRun["floor-own-err-p95-ms"], nearestRank(floor, 95))
			perRun["own-err-floor-ratio"] = append(perRun["own-err-floor-ratio"], nearestRank(own, 95)/nearestRank(floor, 95))
		}
	}
	b.Logf("load average %s; own-err p95 per run: %.3f", loadAverage(), perRun["own-err-p95-ms"])
	for _, q := range quantiles {
		p := strconvFloat(q)
		b.ReportMetric(median(perRun["own-err-p"+p+"-ms"]), "own-err-p"+p+"-ms")
	}
	for _, q := range quantiles {
		p := strconvFloat(q)
		b.ReportMetric(median(perRun["lead-p"+p+"-ms"]), "lead-p"+p+"-ms")
	}
	b.ReportMetric(median(perRun["server-late-p95-ms"]), "server-late-p95-ms")
	b.ReportMetric(median(perRun["server-write-p95-ms"]), "server-write-p95-ms")
	b.ReportMetric(median(perRun["own-err-past-write-p95-ms"]), "own-err-past-write-p95-ms")
	if len(perRun["floor-own-err-p95-ms"]) > 0 {
		b.ReportMetric(median(perRun["floor-own-err-p50-ms"]), "floor-own-err-p50-ms")
		b.ReportMetric(median(perRun["floor-own-err-p95-ms"]), "floor-own-err-p95-ms")
		b.ReportMetric(median(perRun["own-err-floor-ratio"]), "own-err-floor-ratio")
	}
}

// ownErrorRun runs the client once (t, w) against the server at base and
// returns, sorted, every measured request's own error, lead and server
// lateness in ms (matchRecords), after checking that the wall clock did
// not step during the run and that no request saw its first event before
// the server wrote it.
func ownErrorRun(b *testing.B, base string, t capacity.Target, w capacity.Workload) ownErrors {
	_, err := FetchRecords(b.Context(), base) // nothing of an earlier run is left
	require.NoError(b, err)
	w0 := time.Now()
	rep, err := capacity.Run(b.Context(), t, w)
	w1 := time.Now()
	require.NoError(b, err)
	require.Empty(b, rep.Failures)
	step := time.Duration(w1.UnixNano()-w0.UnixNano()) - w1.Sub(w0)
	require.Less(b, step.Abs(), maxClockStep, "the wall clock stepped by %v during the run: the two processes' stamps cannot be compared", step)
	recs, err := FetchRecords(b.Context(), base)
	require.NoError(b, err)
	e := matchRecords(b, rep, recs)
	require.Greater(b, e.own[0], -float64(maxClockStep)/1e6, "an own error below -%v: the client saw the first event before the server wrote it", maxClockStep)
	return e
}

// floorOwnError runs the minimal reader (FloorFirstLines) in a burst of
// requests at concurrency c against the server's url and returns,
// sorted, each request's own error in ms: its first data line's stamp
// minus the server's first write; or the error that failed the run.
func floorOwnError(b *testing.B, hc *http.Client, url string, body func(int) []byte, requests, c int) ([]float64, error) {
	base := url[:strings.LastIndex(url, "/v1/")+len("/v1")]
	_, err := FetchRecords(b.Context(), base)
	require.NoError(b, err)
	_, firsts, err := FloorFirstLines(b.Context(), hc, url, body, requests, c)
	if err != nil {
		return nil, err
	}
	recs, err := FetchRecords(b.Context(), base)
	require.NoError(b, err)
	require.Len(b, recs, requests)
	own := make([]float64, 0, requests)
	for _, r := range recs {
		own = append(own, float64(firsts[r.Index].UnixNano()-r.FirstWriteUnixNS)/1e6)
	}
	slices.Sort(own)
	return own, nil
}

// matchRecords matches the server's records to the run's requests by index
// and returns, sorted, every measured request's own error, lead and
// server lateness in ms. Every successful request must have its record.
func matchRecords(b *testing.B, rep *artifact.Report, recs []Record) ownErrors {
	var e ownErrors
	byIndex := make(map[int]Record, len(recs))
	for _, r := range recs {
		_, dup := byIndex[r.Index]
		require.False(b, dup, "the server recorded request %d twice", r.Index)
		byIndex[r.Index] = r
	}
	require.NotNil(b, rep.AnvilGo)
	wall := func(ms *float64) int64 { return rep.StartedAtUnixNS + int64(math.Round(*ms*1e6)) }
	for _, d := range rep.AnvilGo.Requests {
		if d.Outcome != artifact.OutcomeSuccess {
			continue
		}
		r, ok := byIndex[d.RequestIndex]
		require.True(b, ok, "no server record of request %d", d.RequestIndex)
		require.NotNil(b, d.SentMS)
		require.NotNil(b, d.FirstContentMS)
		first := wall(d.FirstContentMS)
		e.own = append(e.own, float64(first-r.FirstWriteUnixNS)/1e6)
		e.pastWrite = append(e.pastWrite, float64(first-r.FirstWriteDoneUnixNS)/1e6)
		e.lead = append(e.lead, float64(r.HandlerStartUnixNS-wall(d.SentMS))/1e6)
		e.late = append(e.late, float64(r.FirstWriteUnixNS-r.DueUnixNS)/1e6)
		e.write = append(e.write, float64(r.FirstWriteDoneUnixNS-r.FirstWriteUnixNS)/1e6)
	}
	require.Len(b, e.own, len(rep.RequestTimings), "every timing row matched")
	require.NotEmpty(b, e.own)
	for _, xs := range [][]float64{e.own, e.pastWrite, e.lead, e.late, e.write} {
		slices.Sort(xs)
	}
	return e
}

// ownErrors are, in ms and sorted, the measured requests' own errors
// (first content stamp minus the instant before the server's first write),
// the same past the write (minus the instant it returned: the bytes left
// between the two, so a stamp of their arrival is earlier than this when
// the kernel took it during the write), t0's leads, the server's
// lateness and its first write's duration.
type ownErrors struct {
	own, pastWrite, lead, late, write []float64
}

// strconvFloat prints a quantile's number for a metric's name.
func strconvFloat(q float64) string { return strconv.FormatFloat(q, 'f', -1, 64) }

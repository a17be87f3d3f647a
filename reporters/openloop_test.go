package reporters

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// openLoopRun is a 6-request open loop at 20 req/s with 2 in flight:
// requests are due every 50 ms and sent two at a time every 300 ms (not
// before they are due), so from request 2 on each waits for the cap;
// request 5 failed (HTTP 503).
func openLoopRun(t *testing.T) *artifact.Report {
	t.Helper()
	r := syntheticRun(t, 5, 2, 3)
	r.Failures, r.Failed = nil, 0
	r.Requests = 6
	r.Failures = []artifact.Failure{{RequestIndex: 5, PlannedContextTokens: 32768, FailureClass: artifact.FailureHTTPError,
		ErrorType: "http_status", ErrorMessage: "HTTP 503", ElapsedMS: 20, HTTPStatus: new(503)}}
	r.Failed = 1
	offered, achieved := 20.0, 5.9
	x := &artifact.Extension{Version: 1,
		Arrival: &artifact.Arrival{Process: "poisson", RateRPS: 20, OfferedRPS: &offered, AchievedRPS: &achieved, MaxInFlight: 2},
		Run:     &artifact.RunSummary{SentRequests: 6}}
	for i := range 6 {
		sched := 50 * float64(i)
		sent := max(300*float64(i/2), sched)
		d := artifact.RequestDetail{RequestIndex: i, Outcome: artifact.OutcomeSuccess,
			ScheduledMS: new(sched), SentMS: new(sent), QueueMS: new(sent - sched), EndMS: new(sent + 300),
			FirstOutputMS: new(sent + 100), FirstContentMS: new(sent + 150),
			ScheduledTTFTMS: new(sent + 150 - sched), ScheduledE2EMS: new(sent + 300 - sched)}
		if i == 5 {
			d.Outcome, d.FirstOutputMS, d.FirstContentMS, d.ScheduledTTFTMS, d.ScheduledE2EMS = string(artifact.FailureHTTPError), nil, nil, nil, nil
			d.EndMS = new(sent + 20)
		}
		x.Requests = append(x.Requests, d)
	}
	r.AnvilGo = x
	return r
}

// TestScheduledClockUnits: an open loop's benchmark line carries the
// scheduled-clock TTFT p50 and p95 and E2E p50 (nearest rank over the
// successful requests), its file their metadata once; a closed loop has
// none of them.
func TestScheduledClockUnits(t *testing.T) {
	r := openLoopRun(t)
	// scheduled TTFT of requests 0..4: sent - due + 150 with sends 0, 50,
	// 300, 300, 600 and due 0, 50, 100, 150, 200: 150 150 350 300 550.
	vals := map[string]float64{}
	for _, v := range benchValues(r) {
		vals[v.Unit] = v.Value
	}
	require.Equal(t, 300.0, vals[unitSchedTTFTP50], "the 3rd of 150 150 300 350 550")
	require.Equal(t, 550.0, vals[unitSchedTTFTP95])
	require.Equal(t, 450.0, vals[unitSchedE2EP50], "the 3rd of 300 300 450 500 700")

	closed := syntheticRun(t, 5, 2, 3)
	for _, v := range benchValues(closed) {
		require.NotContains(t, v.Unit, "sched-")
	}
	var buf bytes.Buffer
	require.NoError(t, writeBenchfmt(&buf, closed, r, r))
	require.NotContains(t, strings.SplitN(buf.String(), "\nBenchmark", 2)[0], "sched-", "no metadata before a result carries the unit")
	require.Equal(t, 1, strings.Count(buf.String(), "Unit sched-ttft-p95-ms better=lower"))
	p := parseBench(t, buf.Bytes())
	require.Empty(t, p.errs)
	require.Equal(t, -1, p.units.GetBetter(unitSchedTTFTP95))
}

// TestWorkloadIdentityPromptSizing: exact sizing is part of the identity,
// so benchstat never puts an exact and a reference run in one row; the
// reference sizing, like every artifact without the member, is implicit.
func TestWorkloadIdentityPromptSizing(t *testing.T) {
	r := syntheticRun(t, 3, 1, 1)
	ref := workloadIdentity(r)
	require.NotContains(t, ref, "sizing")
	r.AnvilGo = &artifact.Extension{Version: 1, PromptSizing: &artifact.PromptSizing{Method: "reference", CharsPerToken: 3}}
	require.Equal(t, ref, workloadIdentity(r))
	r.AnvilGo.PromptSizing.Method = "exact"
	require.Equal(t, ref+" sizing=exact", workloadIdentity(r))
}

// interruptedRun is a run of 10 planned requests, 6 sent (3 succeeded, 2
// HTTP errors, 1 cancelled in flight) and 4 never sent, which v1 records
// as cancelled failure rows.
func interruptedRun(t *testing.T) *artifact.Report {
	t.Helper()
	r := syntheticRun(t, 3, 2, 4)
	r.Requests, r.Failures = 10, nil
	x := &artifact.Extension{Version: 1, Run: &artifact.RunSummary{SentRequests: 6, NeverSentRequests: 4, Interrupted: true}}
	for i := range 3 {
		x.Requests = append(x.Requests, artifact.RequestDetail{RequestIndex: i, Outcome: artifact.OutcomeSuccess})
	}
	add := func(i int, c artifact.FailureClass, msg string, sent bool) {
		r.Failures = append(r.Failures, artifact.Failure{RequestIndex: i, FailureClass: c, ErrorType: string(c), ErrorMessage: msg})
		outcome := string(c)
		if !sent {
			outcome = artifact.OutcomeNeverSent
		}
		x.Requests = append(x.Requests, artifact.RequestDetail{RequestIndex: i, Outcome: outcome})
	}
	add(3, artifact.FailureHTTPError, "HTTP 503", true)
	add(4, artifact.FailureHTTPError, "HTTP 503", true)
	add(5, artifact.FailureCancelled, "run cancelled", true)
	for i := 6; i < 10; i++ {
		add(i, artifact.FailureCancelled, "run cancelled before the request was sent", false)
	}
	r.Failed = len(r.Failures)
	r.AnvilGo = x
	return r
}

// TestNeverSentAreNotFailures: the class map of an interrupted run counts
// the failures of the requests sent, and sums to the failed count the
// benchmark line, the summary and the page show; the never-sent requests
// are counted apart.
func TestNeverSentAreNotFailures(t *testing.T) {
	r := interruptedRun(t)
	classes := r.SentFailureClasses()
	require.Equal(t, map[string]int{"http_error": 2, "cancelled": 1}, classes)
	require.Equal(t, 3, r.SentFailedRequests())
	require.Equal(t, 4, r.UnsentRequests())

	var sum bytes.Buffer
	require.NoError(t, WriteSummary(&sum, r))
	require.Contains(t, sum.String(), "requests 10  sent 6  succeeded 3  failed 3  never sent 4  performance eligible false")
	require.Contains(t, sum.String(), "failures cancelled=1 http_error=2\n")

	v, err := viewOf(r)
	require.NoError(t, err)
	require.Equal(t, []classCount{{"cancelled", 1}, {"http_error", 2}}, v.Failures)
	page := string(renderHTML(t, r))
	require.Contains(t, page, "10 planned, 6 sent, 3 succeeded, 3 failed, 4 never sent")
	require.Contains(t, page, "cancelled 1, http_error 2")

	r.AnvilGo = nil // no per-request outcomes: every row counts
	require.Equal(t, map[string]int{"http_error": 2, "cancelled": 5}, r.SentFailureClasses())
}

// TestMergedOpenLoopSaysTheInFlight: the arrival line of merged shards
// says that the cap was each shard's, how many were in flight across them
// and how many requests went out over the cap.
func TestMergedOpenLoopSaysTheInFlight(t *testing.T) {
	r := openLoopRun(t)
	r.AnvilGo.Shards = &artifact.ShardSet{Count: 3, InFlight: &artifact.ShardInFlight{Cap: 2, Peak: 5, OverCapRequests: 3}}
	require.Equal(t, "open loop, poisson at 20 req/s: offered 20 req/s, achieved 5.9 req/s, at most 2 in flight per shard; "+
		"across the 3 shards up to 5 at once, 3 requests sent over the cap of 2 (one process would have queued them)", arrivalLine(r))
	r.AnvilGo.Shards.InFlight = &artifact.ShardInFlight{Cap: 2, Peak: 2}
	require.Equal(t, "open loop, poisson at 20 req/s: offered 20 req/s, achieved 5.9 req/s, at most 2 in flight per shard; "+
		"across the 3 shards up to 2 at once", arrivalLine(r))
}

// TestOpenLoopHeaderAndSummary: the page header and the console summary
// give the offered and the achieved rate and the cap, and the
// scheduled-clock latencies (the page in its summary table).
func TestOpenLoopHeaderAndSummary(t *testing.T) {
	r := openLoopRun(t)
	var sum bytes.Buffer
	require.NoError(t, WriteSummary(&sum, r))
	require.Contains(t, sum.String(), "open loop, poisson at 20 req/s: offered 20 req/s, achieved 5.9 req/s, at most 2 in flight\n")
	require.Contains(t, sum.String(), "from the scheduled time (queue included): TTFT p50 300  p95 550  p99 550 ms  E2E p50 450  p95 700  p99 700 ms  queue p50 150  p95 400  max 400 ms")

	v, err := viewOf(r)
	require.NoError(t, err)
	var hdr []string
	for _, f := range v.Identity {
		hdr = append(hdr, f.Label+": "+f.Value)
	}
	require.Contains(t, hdr, "arrival: open loop, poisson at 20 req/s: offered 20 req/s, achieved 5.9 req/s, at most 2 in flight")
	s := v.summaryOf("TTFT from schedule")
	require.NotNil(t, s)
	require.Equal(t, metricSummary{Name: "TTFT from schedule", Unit: "ms", Samples: 5, P50: 300, P95: 550, P99: 550}, *s)
	require.NotNil(t, v.summaryOf("E2E from schedule"))
	page := string(renderHTML(t, r))
	require.Contains(t, page, "TTFT from schedule")
	require.Contains(t, page, `id="sched-ttft"`, "an open loop's page draws the scheduled TTFT's CDF")
	require.Contains(t, page, "run 1: 5 samples, p50 300 ms, p95 550 ms")
	require.NotContains(t, string(renderHTML(t, syntheticRun(t, 5, 2, 3))), `id="sched-ttft"`)
}

// TestTimelineDrawsFromTheSchedule: an open loop's timeline orders and
// places each request at the time it was due and draws its wait for the
// in-flight cap (due to sent) before the send; a closed loop keeps the
// send as the start.
func TestTimelineDrawsFromTheSchedule(t *testing.T) {
	r := openLoopRun(t)
	v, err := viewOf(r)
	require.NoError(t, err)
	require.True(t, v.Scheduled)
	rows, g := timelineRows(&v)
	require.Equal(t, 1, g)
	var due, sent []float64
	for _, row := range rows {
		due, sent = append(due, row.sched), append(sent, row.start)
	}
	require.Equal(t, []float64{0, 50, 100, 150, 200, 250}, due, "bars start when due, in scheduled order")
	require.Equal(t, []float64{0, 50, 300, 300, 600, 600}, sent)
	page := string(renderHTML(t, r))
	require.Contains(t, page, "requests in scheduled order")
	require.Contains(t, page, "request 2: due 100 ms, sent 300 ms")
	require.Contains(t, page, `fill="`+colorQueue+`"`, "the queue wait is drawn")
	require.Contains(t, page, ">queued</text>", "and in the legend")

	closed := syntheticRun(t, 5, 2, 3)
	cv, err := viewOf(closed)
	require.NoError(t, err)
	require.False(t, cv.Scheduled)
	require.NotContains(t, string(renderHTML(t, closed)), `fill="`+colorQueue+`"`)
}

// TestSharedPrefixText: the header says what the prompts shared: the
// configured prefix, or the part of it a shorter context holds.
func TestSharedPrefixText(t *testing.T) {
	for _, tc := range []struct {
		prefix int
		ctx    *int
		dist   map[int]int
		want   string
	}{
		{8000, new(32768), nil, "shared prefix 8000 tokens"},
		{8000, new(1000), nil, "shared prefix at most 1000 tokens (the context; 8000 configured)"},
		{8000, nil, map[int]int{1000: 2, 4096: 1, 16384: 3}, "shared prefix at most 1000..8000 tokens (each context; 8000 configured)"},
		{0, new(1000), nil, "no shared prefix"},
	} {
		r := &artifact.Report{SharedPrefixTokens: tc.prefix, ContextTokens: tc.ctx, ContextDistribution: tc.dist}
		require.Equal(t, tc.want, sharedPrefixText(r))
	}
}

// syntheticOpenLoop is syntheticRun as an open loop of n requests due at a
// constant rate with at most limit in flight: each request is sent when it
// is due or, at the cap, when the earliest request in flight ends, and
// keeps its synthetic latencies (a failure lasts its elapsed time).
func syntheticOpenLoop(t testing.TB, n, limit int, rate float64) *artifact.Report {
	t.Helper()
	r := syntheticRun(t, n, limit, 5)
	dur := map[int]float64{}
	content := map[int][2]float64{}
	for _, row := range r.RequestTimings {
		dur[row.RequestIndex] = row.E2EMS
		content[row.RequestIndex] = [2]float64{row.TimeToFirstOutputMS, row.TTFTMS}
	}
	for _, f := range r.Failures {
		dur[f.RequestIndex] = f.ElapsedMS
	}
	offered := rate
	x := &artifact.Extension{Version: 1,
		Arrival: &artifact.Arrival{Process: "constant", RateRPS: rate, OfferedRPS: &offered, MaxInFlight: limit},
		Run:     &artifact.RunSummary{SentRequests: n}}
	free := make([]float64, limit) // when each slot is free again
	lastSent, lastEnd := 0.0, 0.0
	for i := range n {
		due := float64(i) * 1000 / rate
		slot := 0
		for s := range free {
			if free[s] < free[slot] {
				slot = s
			}
		}
		sent := max(due, free[slot])
		end := sent + dur[i]
		free[slot], lastSent, lastEnd = end, sent, max(lastEnd, end)
		d := artifact.RequestDetail{RequestIndex: i, Outcome: artifact.OutcomeSuccess,
			ScheduledMS: new(due), SentMS: new(sent), QueueMS: new(sent - due), EndMS: new(end)}
		if c, ok := content[i]; ok {
			d.FirstOutputMS, d.FirstContentMS = new(sent+c[0]), new(sent+c[1])
			d.ScheduledTTFTMS, d.ScheduledE2EMS = new(sent+c[1]-due), new(end-due)
		} else {
			d.Outcome = "failed"
		}
		x.Requests = append(x.Requests, d)
	}
	achieved := float64(n-1) / lastSent * 1000
	x.Arrival.AchievedRPS = &achieved
	r.AnvilGo, r.WallClockMS = x, lastEnd
	return r
}

// TestSyntheticOpenLoopQueues: the fixture of the browser test's open-loop
// picture queues: at 20 req/s with 4 in flight requests of about 2.5 s
// wait, so the sends spread over a longer time than the schedule.
func TestSyntheticOpenLoopQueues(t *testing.T) {
	r := syntheticOpenLoop(t, 60, 4, 20)
	sc := scheduledOf(r)
	require.NotNil(t, sc)
	require.Positive(t, *quantile(sc.queue, .5))
	require.Less(t, *r.AnvilGo.Arrival.AchievedRPS, 20.0)
	v, err := viewOf(r)
	require.NoError(t, err)
	require.True(t, v.Scheduled)
}

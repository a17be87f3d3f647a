package reporters

import (
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// replayRun is a synthetic run of 60 requests that replayed a trace: due
// at 50 ms steps (so 20 a second), prompts of 1000 tokens in the first
// second and 3000 after, with their send offsets and the send lag.
func replayRun(t *testing.T) *artifact.Report {
	r := syntheticRun(t, 60, 4, 1)
	x := &artifact.Extension{Version: 1, Workload: &artifact.Workload{Kind: artifact.WorkloadTrace,
		Trace: &artifact.TraceWorkload{File: "conv.jsonl", Format: "mooncake", SHA256: "7f0f42025c3a7065a7672d854fa88ce778d061ea0a7df327221f05aeda8439dd",
			Rows: 60, SpeedUp: 10}, SendLagMS: &artifact.SendLag{Requests: 60, P50: 0.5, P99: 4, Max: 6}}}
	for i := range 60 {
		sched, prompt := float64(i)*50, 1000
		if i >= 20 {
			prompt = 3000
		}
		d := artifact.RequestDetail{RequestIndex: i, Outcome: artifact.OutcomeSuccess, ScheduledMS: new(sched), SentMS: new(sched + 0.5),
			EndMS: new(sched + 900), PlannedPromptTokens: prompt, TraceLine: new(i + 1)}
		if k := slices.IndexFunc(r.Failures, func(f artifact.Failure) bool { return f.RequestIndex == i }); k >= 0 {
			d.Outcome = string(r.Failures[k].FailureClass)
		}
		x.Requests = append(x.Requests, d)
	}
	r.AnvilGo = x
	return r
}

// sessionsRun is a synthetic run of 10 three-turn sessions whose turn k
// has (k-1)·400 of its k·500 counted prompt tokens cached.
func sessionsRun(t *testing.T) *artifact.Report {
	r := syntheticRun(t, 30, 3, 2)
	x := &artifact.Extension{Version: 1, Workload: &artifact.Workload{Kind: artifact.WorkloadSessions,
		Sessions: &artifact.SessionsWorkload{Spec: new("turns=3,user=500,output=64,think=1s,think_dist=fixed,seed=0"), Sessions: 10, Users: new(3)}}}
	for i := range 30 {
		turn := i%3 + 1
		x.Requests = append(x.Requests, artifact.RequestDetail{RequestIndex: i, Outcome: artifact.OutcomeSuccess,
			PlannedPromptTokens: 500 * turn, CountedPromptTokens: new(500 * turn), CachedPromptTokens: new(400 * (turn - 1)),
			Session: new(strconv.Itoa(i / 3)), Turn: new(turn)})
	}
	r.AnvilGo = x
	return r
}

// TestWriteHTMLTraffic pins the charts of a replay (offered requests/s
// and prompt tokens/s in 1 s bins, TTFT over the same time) and of
// sessions (TTFT and cached share by turn), and checks what they show.
func TestWriteHTMLTraffic(t *testing.T) {
	page := renderHTML(t, replayRun(t), sessionsRun(t), syntheticRun(t, 20, 2, 3))
	benchGolden(t, "html/traffic.golden", structureText(t, page))
	byID := map[string]chartStructure{}
	for _, c := range parseCharts(t, page) {
		byID[c.id] = c
	}
	for _, id := range []string{"traffic-1-rps", "traffic-1-tps", "traffic-1-ttft"} {
		require.Equal(t, []string{"run 1"}, byID[id].series, id)
		require.Equal(t, "scheduled time (s from the start of the measured phase)", byID[id].axes[0], id)
	}
	require.NotContains(t, byID, "traffic-2-rps", "sessions have no offered-load chart")
	require.NotContains(t, byID, "traffic-3-rps", "a synthetic run has none")
	require.Equal(t, []string{"run 2"}, byID["turns-ttft"].series)
	require.Equal(t, []string{"run 2"}, byID["turns-cached"].series)

	s := string(page)
	require.Contains(t, s, "run 1: offered requests/s, peak 20")
	require.Contains(t, s, "run 1: offered prompt tokens/s, peak 60k")
	require.Contains(t, s, "conv.jsonl, sha256 7f0f42025c3a…, speed-up 10, send lag p50 0.5, p99 4, max 6 ms")
	// Turn k's cached share is (k-1)·400 / (k·500).
	for k := 1; k <= 3; k++ {
		share := 100 * float64(400*(k-1)) / float64(500*k)
		require.Contains(t, s, "run 2 turn "+strconv.Itoa(k)+": "+fmtNum(share)+" %", "turn %d", k)
	}
}

// TestLoadBins: requests fall in the 1 s bin of their scheduled offset;
// failed ones count as offered load but carry no TTFT.
func TestLoadBins(t *testing.T) {
	v, err := viewOf(replayRun(t))
	require.NoError(t, err)
	bins := loadBins(&v)
	require.Len(t, bins, 3)
	for k, want := range []float64{20 * 1000, 20 * 3000, 20 * 3000} {
		require.Equal(t, 20.0, bins[k].requests, "bin %d", k)
		require.Equal(t, want, bins[k].promptTokens, "bin %d", k)
	}
	require.Len(t, bins[0].ttft, 20, "requests 0..19 succeeded")
	require.Len(t, bins[1].ttft, 19, "request 24 (in 20..39) failed")
	require.Len(t, bins[2].ttft, 19, "request 49 (in 40..59) failed")
	require.False(t, math.IsNaN(bins[0].ttft[0]))
}

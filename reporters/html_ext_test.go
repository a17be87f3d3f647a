package reporters

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// sweepViews is a concurrency search of four probes (1, 2, 4, 8) under a
// TTFT SLO of 800 ms met by the first three, each with chunk ITL; the last
// probe is laid out by send offsets with queue times.
func sweepViews(t *testing.T) []runView {
	t.Helper()
	var views []runView
	for k, conc := range []int{1, 2, 4, 8} {
		v, err := viewOf(syntheticRun(t, 40, conc, uint64(10+k)))
		require.NoError(t, err)
		v.Ext = extView{
			Search: &searchView{Kind: "concurrency", Probe: k, Value: float64(conc)},
			SLO: &sloView{TTFTMS: 800, TPOTMS: math.NaN(), E2EMS: math.NaN(), Attainment: 0.9,
				Attained: 1 - 0.05*float64(k*k), Passed: conc < 8, GoodputRPS: float64(conc)},
			ITL: &itlView{P50: 9 + float64(k), P90: 14, P99: 40, P999: 120, Max: 300 + 50*float64(k),
				Gaps: 4000, Stalls: k * 3, Exact: k%2 == 0, StallRule: "gap > 10 × the request's median gap and > 200 ms"},
		}
		v.Throughput = 100 * float64(conc) / (1 + 0.1*float64(k))
		views = append(views, v)
	}
	last := &views[3]
	last.Offsets = true
	last.Ext.Arrival = &arrivalView{Process: "poisson", RateRPS: 8, Burstiness: 1, OfferedRPS: 8, AchievedRPS: 7.9}
	for i := range last.Requests {
		q := &last.Requests[i]
		sched := float64(i) * 125
		q.Queue = float64(i%5) * 20
		shift := sched + q.Queue
		q.Start, q.FirstOutput, q.FirstContent, q.End = shift, q.FirstOutput+shift, q.FirstContent+shift, q.End+shift
	}
	return views
}

func TestWriteHTMLExtensionGolden(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, writePage(&buf, sweepViews(t)))
	page := buf.Bytes()
	benchGolden(t, "html/extension.golden", structureText(t, page))

	byID := map[string]chartStructure{}
	for _, c := range parseCharts(t, page) {
		byID[c.id] = c
	}
	itl := byID["itl"]
	require.Equal(t, []string{"run 1", "run 2", "run 3", "run 4"}, itl.series)
	require.Equal(t, []string{"gap between output chunks (ms, log scale)", "run"}, itl.axes)
	require.Equal(t, []string{"run 4"}, byID["queue"].series, "only the open-loop run has queue times")
	tp := byID["sweep-concurrency-throughput"]
	require.Equal(t, []string{"throughput"}, tp.series)
	require.Equal(t, []string{"concurrency (requests in flight)", "output throughput (tok/s)"}, tp.axes)
	lat := byID["sweep-concurrency-ttft"]
	require.Equal(t, []string{"TTFT p50", "TTFT p99"}, lat.series)
	s := string(page)
	require.Contains(t, s, "<title>best passing concurrency: 4</title>", "the knee is the highest passing value")
	require.Contains(t, s, "<title>SLO: TTFT latency at most 800 ms</title>")
	require.Contains(t, s, "SLO missed")
	require.Contains(t, s, "time since the run started (ms)", "the open-loop run is laid out by send offsets")
	require.NotContains(t, s, "sweep-concurrency-tpot", "no chart for a bound that is not set")
}

// TestViewReadsAnvilGo: the adapter reads the anvil_go member of an
// artifact: send offsets, queue times, chunk ITL, arrival, SLO and search.
func TestViewReadsAnvilGo(t *testing.T) {
	r := syntheticRun(t, 3, 1, 2)
	r.Failures, r.Failed = nil, 0
	var doc map[string]any
	data, err := r.MarshalJSON()
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &doc))
	doc["anvil_go"] = map[string]any{
		"version": 1,
		"arrival": map[string]any{"process": "gamma", "rate_rps": 2.5, "burstiness": 0.5, "offered_rps": 2.5, "achieved_rps": 2.4},
		"slo":     map[string]any{"ttft_ms": 500.0, "tpot_ms": nil, "attainment": 0.9, "attained": 1.0, "passed": true, "goodput_rps": 2.4},
		"search":  map[string]any{"kind": "rate", "probe": 2, "value": 2.5},
		"chunk_timing": map[string]any{"itl_ms": map[string]any{"p50": 10.0, "p90": 12.0, "p99": 30.0, "p999": 80.0, "max": 95.0},
			"gaps": 600, "exact": true, "stalls": 2, "stall_rule": map[string]any{"relative": 8.0, "floor_ms": 250.0, "override_ms": nil}},
		"requests": []any{
			map[string]any{"request_index": 0, "sent_ms": 0.0, "queue_ms": 0.0, "first_output_ms": 100.0, "first_content_ms": 150.0, "end_ms": 900.0},
			map[string]any{"request_index": 1, "sent_ms": 400.0, "queue_ms": 5.0, "first_output_ms": 500.0, "first_content_ms": 560.0, "end_ms": 1200.0},
			map[string]any{"request_index": 2, "sent_ms": 800.0, "queue_ms": 12.5, "first_output_ms": 880.0, "first_content_ms": 990.0, "end_ms": 1500.0},
		},
	}
	data, err = json.Marshal(doc)
	require.NoError(t, err)
	rr, err := artifact.Read(bytes.NewReader(data))
	require.NoError(t, err)
	v, err := viewOf(rr)
	require.NoError(t, err)

	require.True(t, v.Offsets)
	var starts, queues []float64
	for _, q := range v.Requests {
		starts, queues = append(starts, q.Start), append(queues, q.Queue)
	}
	require.Equal(t, []float64{0, 400, 800}, starts)
	require.Equal(t, []float64{0, 5, 12.5}, queues)
	require.Equal(t, 990.0, v.Requests[2].FirstContent)
	want := extView{
		Arrival: &arrivalView{"gamma", 2.5, 0.5, 2.5, 2.4},
		Search:  &searchView{"rate", 2, 2.5},
		ITL:     &itlView{10, 12, 30, 80, 95, 600, 2, true, "gap > 8 × the request's median gap and > 250 ms"},
	}
	got := v.Ext
	require.NotNil(t, got.SLO)
	require.Equal(t, 500.0, got.SLO.TTFTMS)
	require.True(t, math.IsNaN(got.SLO.TPOTMS) && math.IsNaN(got.SLO.E2EMS), "unset bounds are NaN")
	require.True(t, got.SLO.Passed)
	got.SLO = nil
	if d := cmp.Diff(want, got, cmp.AllowUnexported(extView{})); d != "" {
		t.Fatalf("ext view (-want +got):\n%s", d)
	}
	var hdr []string
	for _, f := range v.Identity {
		hdr = append(hdr, f.Label+": "+f.Value)
	}
	require.Contains(t, strings.Join(hdr, "\n"), "arrival: open loop, gamma at 2.5 req/s: offered 2.5 req/s, achieved 2.4 req/s")
}

// TestViewWithoutOffsets: without anvil_go.requests each request starts at
// its own send, at 0, and ends at its E2E or elapsed time.
func TestViewWithoutOffsets(t *testing.T) {
	v, err := viewOf(syntheticRun(t, 50, 2, 4))
	require.NoError(t, err)
	require.False(t, v.Offsets)
	for i, q := range v.Requests {
		require.Equal(t, i, q.Index, "sorted by request index")
		require.Zero(t, q.Start)
		if q.failed() {
			require.Contains(t, q.Message, "failed")
		} else {
			require.Equal(t, q.E2E, q.End)
			require.LessOrEqual(t, q.FirstOutput, q.FirstContent)
		}
	}
}

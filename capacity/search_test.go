package capacity

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/arrival"
	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// probeLog is what a search probed, in order: value and verdict.
type probeLog struct {
	Value  float64
	Passed bool
}

func probesOf(t *testing.T, res SearchResult, kind string) []probeLog {
	t.Helper()
	out := make([]probeLog, len(res.Runs))
	for i, r := range res.Runs {
		require.NotNil(t, r.AnvilGo.Search, "probe %d carries anvil_go.search", i)
		require.NotNil(t, r.AnvilGo.SLO, "probe %d carries anvil_go.slo", i)
		require.Equal(t, string(kind), r.AnvilGo.Search.Kind)
		require.Equal(t, i, r.AnvilGo.Search.Probe)
		out[i] = probeLog{r.AnvilGo.Search.Value, r.AnvilGo.SLO.Passed}
	}
	return out
}

// TestSearchConcurrencyKnee: the fake with 6 slots and a service time of
// 200 ms has an exact knee for a TTFT SLO between its two TTFT levels. Up
// to 6 requests in flight every TTFT is the slot prefill (100 ms); with 7
// one request in 7 waits a whole service time more (TTFT 300 ms), 14% of
// the requests, more than the 10% an attainment of 0.9 allows. The search
// doubles 1, 2, 4, 8 (fails), bisects 6 (passes), 7 (fails) and returns
// exactly 6.
func TestSearchConcurrencyKnee(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg, err := fakeserver.Slots(6, 200*time.Millisecond)
		require.NoError(t, err)
		srv := fakeserver.NewInMemory(cfg)
		defer srv.Close()
		slo := SLO{TTFT: cfg.SlotPrefill + 100*time.Millisecond}
		res, err := Search(t.Context(),
			RunProber(Target{BaseURL: srv.URL + "/v1", HTTPClient: srv.Client()}),
			Workload{ContextTokens: 512}, slo, SearchSpec{Kind: "concurrency", Max: 64})
		require.NoError(t, err)
		require.Equal(t, 6.0, res.Best)
		require.Equal(t, 7.0, res.Failed)
		require.True(t, res.Found)
		require.False(t, res.AtMax)
		want := []probeLog{{1, true}, {2, true}, {4, true}, {8, false}, {6, true}, {7, false}}
		if diff := cmp.Diff(want, probesOf(t, res, concurrencySearch)); diff != "" {
			t.Fatalf("probes (-want +got):\n%s", diff)
		}
		for _, r := range res.Runs {
			require.Equal(t, 100, r.Requests, "probeRequests at attainment 0.9")
			require.Equal(t, int(r.AnvilGo.Search.Value), r.Concurrency)
			require.Equal(t, latencyClockSent, r.AnvilGo.SLO.LatencyClock)
		}
		require.Equal(t, 100, res.Runs[4].AnvilGo.SLO.MetRequests, "at the knee every TTFT is the prefill")
	})
}

// mdOneMet is the M/D/1 queue of the Slots(1, service) fake fed by the
// schedule: request i arrives at offsets[i], starts when the slot is free
// (FIFO) and holds it for service. It returns how many requests waited at
// most maxWait, by the Lindley recursion in integer nanoseconds.
func mdOneMet(offsets []time.Duration, service, maxWait time.Duration) int {
	met := 0
	var free time.Duration
	for _, at := range offsets {
		start := max(at, free)
		if start-at <= maxWait {
			met++
		}
		free = start + service
	}
	return met
}

// TestSearchRateBand: a rate search on one slot of deterministic service
// S = 100 ms (an M/D/1 queue under Poisson arrivals) with the SLO "TTFT at
// most one service time above the prefill", i.e. a queueing wait <= S for
// 90% of requests. Queueing theory (Erlang's M/D/1 waiting-time
// distribution) gives P(wait <= S) = (1 - ρ)·e^ρ at load ρ = λS, which is
// 0.9 at ρ* = 0.392: a knee of 3.92 requests per second in steady state.
// A run of 400 requests starts from an empty server, so its knee is
// random around ρ*: over 300 seeds (the same recursion) 98% of the knees
// lie in [0.30, 0.51]; the search reports a passing rate within 5% below
// the knee. The band asserted is therefore [0.30/1.05, 0.51]/S =
// [2.86, 5.1] requests per second. Every probe is also checked exactly:
// its met requests are those the recursion predicts for its schedule.
func TestSearchRateBand(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const service = 100 * time.Millisecond
		cfg, err := fakeserver.Slots(1, service)
		require.NoError(t, err)
		srv := fakeserver.NewInMemory(cfg)
		defer srv.Close()
		slo := SLO{TTFT: cfg.SlotPrefill + service}
		w := Workload{ContextTokens: 512, Requests: 400, Seed: 3, Arrival: arrivalPoisson}
		res, err := Search(t.Context(), RunProber(Target{BaseURL: srv.URL + "/v1", HTTPClient: srv.Client()}), w, slo, SearchSpec{Kind: "rate", Max: 40})
		require.NoError(t, err)
		t.Logf("best rate %.3f/s (ρ = %.3f), first failing %.3f/s, %d probes", res.Best, res.Best*service.Seconds(), res.Failed, len(res.Runs))
		require.True(t, res.Found)
		require.GreaterOrEqual(t, res.Best, 0.30/1.05/service.Seconds())
		require.LessOrEqual(t, res.Best, 0.51/service.Seconds())
		require.LessOrEqual(t, res.Failed-res.Best, defaultRatePrecision*res.Best, "bisected to the precision")
		for i, r := range res.Runs {
			v := r.AnvilGo.Search.Value
			offsets, err := arrival.Schedule(arrival.Spec{Process: arrival.Poisson, Rate: v, Seed: 3}, 400)
			require.NoError(t, err)
			require.Equal(t, mdOneMet(offsets, service, service), r.AnvilGo.SLO.MetRequests, "probe %d at %g/s", i, v)
			require.Equal(t, latencyClockScheduled, r.AnvilGo.SLO.LatencyClock)
			require.Equal(t, maxConcurrency, r.AnvilGo.Arrival.MaxInFlight)
		}
		require.Equal(t, 40.0/defaultRateStartDivisor, res.Runs[0].AnvilGo.Search.Value)
	})
}

// scriptedProber passes a probe when its value is at most knee and records
// the workloads it was given.
type scriptedProber struct {
	knee float64
	seen []Workload
}

func (s *scriptedProber) Probe(_ context.Context, w Workload, p artifact.SearchProbe) (*artifact.Report, error) {
	s.seen = append(s.seen, w)
	r := &artifact.Report{Requests: 1, WallClockMS: 1000, RequestTimings: []artifact.TimingRow{{TTFTMS: 1}}}
	if p.Value > s.knee {
		r.RequestTimings[0].TTFTMS = 1000
	}
	return r, nil
}

// TestSearchPaths: the grow, shrink and bisect paths of both kinds, on a
// prober with a known knee.
func TestSearchPaths(t *testing.T) {
	slo := SLO{TTFT: 10 * time.Millisecond}
	for _, tc := range []struct {
		name   string
		spec   SearchSpec
		knee   float64
		best   float64
		atMax  bool
		values []float64
	}{
		{"concurrency at max", SearchSpec{Kind: concurrencySearch, Max: 5}, 100, 5, true, []float64{1, 2, 4, 5}},
		{"concurrency none", SearchSpec{Kind: concurrencySearch, Max: 5}, 0, 0, false, []float64{1}},
		{"concurrency shrink", SearchSpec{Kind: concurrencySearch, Max: 64, Start: 16}, 5, 5, false, []float64{16, 8, 4, 6, 5}},
		{"concurrency 1", SearchSpec{Kind: concurrencySearch, Max: 64}, 1, 1, false, []float64{1, 2}},
		{"rate bisect", SearchSpec{Kind: rateSearch, Max: 100, Start: 10, Precision: 0.1}, 33, 32.5, false, []float64{10, 20, 40, 30, 35, 32.5}},
		{"rate shrink", SearchSpec{Kind: rateSearch, Max: 100, Start: 8, Precision: 0.25}, 3, 3, false, []float64{8, 4, 2, 3, 3.5}},
		{"rate at max", SearchSpec{Kind: rateSearch, Max: 10}, 50, 10, true, []float64{0.625, 1.25, 2.5, 5, 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &scriptedProber{knee: tc.knee}
			res, err := Search(t.Context(), p, Workload{ContextTokens: 512}, slo, tc.spec)
			require.NoError(t, err)
			require.Equal(t, tc.best, res.Best)
			require.Equal(t, tc.atMax, res.AtMax)
			require.Equal(t, tc.best > 0, res.Found)
			var got []float64
			for _, r := range res.Runs {
				got = append(got, r.AnvilGo.Search.Value)
			}
			require.Equal(t, tc.values, got)
			for _, w := range p.seen {
				require.Equal(t, 100, w.Requests)
			}
		})
	}
}

// TestSearchInvalid: spec, SLO and workload problems are FieldErrors
// before any probe runs.
func TestSearchInvalid(t *testing.T) {
	slo := SLO{TTFT: time.Second}
	for _, tc := range []struct {
		name  string
		w     Workload
		slo   SLO
		spec  SearchSpec
		field string
	}{
		{"kind", Workload{}, slo, SearchSpec{Kind: "latency", Max: 4}, "SearchSpec.Kind"},
		{"concurrency max", Workload{}, slo, SearchSpec{Kind: concurrencySearch, Max: 0}, "SearchSpec.Max"},
		{"fractional max", Workload{}, slo, SearchSpec{Kind: concurrencySearch, Max: 2.5}, "SearchSpec.Max"},
		{"start above max", Workload{}, slo, SearchSpec{Kind: concurrencySearch, Max: 4, Start: 8}, "SearchSpec.Start"},
		{"precision for concurrency", Workload{}, slo, SearchSpec{Kind: concurrencySearch, Max: 4, Precision: 0.1}, "SearchSpec.Precision"},
		{"rate max", Workload{}, slo, SearchSpec{Kind: rateSearch, Max: maxRate * 2}, "SearchSpec.Max"},
		{"rate precision", Workload{}, slo, SearchSpec{Kind: rateSearch, Max: 10, Precision: 1}, "SearchSpec.Precision"},
		{"no slo", Workload{}, SLO{}, SearchSpec{Kind: rateSearch, Max: 10}, "SLO.TTFT"},
		{"duration", Workload{Duration: time.Second}, slo, SearchSpec{Kind: rateSearch, Max: 10}, "Workload.Duration"},
		{"burst", Workload{Burst: 2}, slo, SearchSpec{Kind: concurrencySearch, Max: 4}, "Workload.Burst"},
		{"shard", Workload{Shard: Shard{Count: 2, StartAt: time.Unix(1, 0)}}, slo, SearchSpec{Kind: concurrencySearch, Max: 4}, "Workload.Shard.Count"},
		{"bad workload", Workload{MaxTokens: -1}, slo, SearchSpec{Kind: concurrencySearch, Max: 4}, "Workload.MaxTokens"},
		{"repeats", Workload{}, slo, SearchSpec{Kind: concurrencySearch, Max: 4, Repeats: 101}, "SearchSpec.Repeats"},
		{"negative repeats", Workload{}, slo, SearchSpec{Kind: rateSearch, Max: 10, Repeats: -1}, "SearchSpec.Repeats"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &scriptedProber{knee: 1}
			_, err := Search(t.Context(), p, tc.w, tc.slo, tc.spec)
			var ce *FieldError
			require.True(t, errors.As(err, &ce), "%v", err)
			require.Equal(t, tc.field, ce.Field, "%v", err)
			require.Empty(t, p.seen, "no probe ran")
		})
	}
}

// TestProbeRequests pins the sizing rule.
func TestProbeRequests(t *testing.T) {
	for _, tc := range []struct {
		requests   int
		attainment float64
		want       int
	}{
		{0, 0, 100}, {0, 0.9, 100}, {250, 0.9, 250}, {0, 0.5, 60}, {0, 0.99, 1000},
		{0, 0.999, 10000}, {0, 0.9999, maxRequests}, {0, 1, 60}, {30, 1, 30}, {0, 0.95, 200},
	} {
		got, err := probeRequests(Workload{Requests: tc.requests}, SLO{TTFT: time.Second, Attainment: tc.attainment})
		require.NoError(t, err)
		require.Equal(t, tc.want, got, "requests %d attainment %g", tc.requests, tc.attainment)
	}
}

// TestSearchProbeError: a failing probe ends the search with its error
// and the probes run so far.
func TestSearchProbeError(t *testing.T) {
	boom := errors.New("boom")
	calls := 0
	p := ProberFunc(func(context.Context, Workload, artifact.SearchProbe) (*artifact.Report, error) {
		calls++
		if calls == 2 {
			return nil, boom
		}
		return &artifact.Report{Requests: 1, WallClockMS: 1, RequestTimings: []artifact.TimingRow{{}}}, nil
	})
	res, err := Search(t.Context(), p, Workload{}, SLO{TTFT: time.Second}, SearchSpec{Kind: concurrencySearch, Max: 8})
	require.ErrorIs(t, err, boom)
	require.Len(t, res.Runs, 1)
	require.Equal(t, 1.0, res.Best)
}

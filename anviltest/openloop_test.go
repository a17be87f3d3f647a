package anviltest

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/artifact"
	fakeserver "github.com/anvilbench/anvil/fake_server"
)

func TestOpenLoopEnvFillsOnlyZeroFields(t *testing.T) {
	s := newSettings([]Option{WithEnvironment(env{envRate: "12.5", envArrival: "gamma", envBurstiness: "0.5"}.get)})
	got, err := s.applyWorkloadEnv(capacity.Workload{})
	require.NoError(t, err)
	require.Equal(t, 12.5, got.Rate)
	require.Equal(t, capacity.ArrivalProcess("gamma"), got.Arrival)
	require.Equal(t, 0.5, got.Burstiness)
	got, err = s.applyWorkloadEnv(capacity.Workload{Rate: 3, Arrival: "constant", Burstiness: 2})
	require.NoError(t, err)
	require.Equal(t, capacity.Workload{Rate: 3, Arrival: "constant", Burstiness: 2}, got, "the Workload's own values win")

	for _, tc := range []struct{ name, value, want string }{
		{envRate, "fast", `ANVIL_RATE = "fast": want a positive number of requests per second`},
		{envRate, "0", `ANVIL_RATE = "0": want a positive number of requests per second`},
		{envRate, "2e6", `ANVIL_RATE = "2e6": want a positive number of requests per second: capacity: Workload.Rate = 2e+06: must be 0 (closed loop) or in [0.001, 1e+06] requests per second`},
		{envArrival, "bursty", `ANVIL_ARRIVAL = "bursty": want constant, poisson or gamma`},
		{envBurstiness, "1000", `ANVIL_BURSTINESS = "1000": want a positive gamma shape: capacity: Workload.Burstiness = 1000: must be in [0.01, 100]`},
	} {
		_, err := newSettings([]Option{WithEnvironment(env{tc.name: tc.value}.get)}).applyWorkloadEnv(capacity.Workload{})
		var ee *capacity.FieldError
		require.True(t, errors.As(err, &ee), "%v", err)
		require.Equal(t, tc.name, ee.Field)
		require.Contains(t, err.Error(), tc.want)
	}
	// A combination capacity refuses names the variable that set the field.
	s = newSettings([]Option{WithEnvironment(env{envArrival: "poisson"}.get)})
	w, err := s.applyWorkloadEnv(capacity.Workload{})
	require.NoError(t, err)
	_, err = w.Resolved()
	require.ErrorContains(t, explainFields(err, s.envFieldNames()...), "Workload.Arrival comes from ANVIL_ARRIVAL")
}

func TestSLOFromOptionsAndEnvironment(t *testing.T) {
	s := newSettings([]Option{WithSLO(capacity.SLO{TTFT: time.Second}),
		WithEnvironment(env{envSLOTTFT: "5s", envSLOE2E: "9s", envSLOAttainment: "0.95"}.get)})
	require.NoError(t, s.resolveSLO())
	require.Equal(t, capacity.SLO{TTFT: time.Second, E2E: 9 * time.Second, Attainment: 0.95}, s.slo, "the option's bound wins, the environment fills the rest")

	s = newSettings([]Option{WithEnvironment(env{}.get)})
	require.NoError(t, s.resolveSLO())
	require.False(t, s.slo.Set(), "no SLO unless a bound is set")

	for _, tc := range []struct {
		env  env
		want string
	}{
		{env{envSLOTTFT: "soon"}, `ANVIL_SLO_TTFT = "soon": want a positive duration`},
		{env{envSLOTPOT: "-5ms"}, `ANVIL_SLO_TPOT = "-5ms": want a positive duration`},
		{env{envSLOTTFT: "1s", envSLOAttainment: "1.5"}, `ANVIL_SLO_ATTAINMENT = "1.5": want a share in (0, 1]`},
		{env{envSLOAttainment: "0.9"}, "an SLO attainment (0.9) without a bound"},
	} {
		err := newSettings([]Option{WithEnvironment(tc.env.get)}).resolveSLO()
		require.ErrorContains(t, err, tc.want)
	}
}

// TestCapacityOpenLoopWithSLO runs an open loop through Capacity against
// the embedded fake: -benchtime 30x is 30 scheduled requests; the SLO
// makes the line carry goodput-req/s and the artifacts anvil_go.slo; the
// .bench identity names the arrival process and rate.
func TestCapacityOpenLoopWithSLO(t *testing.T) {
	clearEnv(t)
	setBenchtime(t, "30x")
	out := t.TempDir()
	var rep *artifact.Report
	res := testing.Benchmark(func(b *testing.B) {
		rep = Capacity(b, capacity.Workload{ContextTokens: 2048, Concurrency: 4, MaxTokens: 256, Rate: 200, Arrival: "constant"},
			withFakeProfile("fast"), withOutDir(out), WithSLO(capacity.SLO{E2E: time.Minute}))
	})
	require.NotNil(t, rep, "the benchmark failed")
	require.Equal(t, 30, rep.Requests)
	require.Equal(t, 30, res.N)
	require.Equal(t, "constant", rep.AnvilGo.Arrival.Process)
	require.Equal(t, 200.0, rep.AnvilGo.Arrival.RateRPS)
	require.Equal(t, 30, rep.AnvilGo.SLO.MetRequests)
	require.Equal(t, rep.AnvilGo.SLO.GoodputRPS, res.Extra["goodput-req/s"])
	benches, _ := filepath.Glob(filepath.Join(out, "*.bench"))
	require.Len(t, benches, 1)
	data, err := os.ReadFile(benches[0])
	require.NoError(t, err)
	require.Contains(t, string(data), " arrival=constant rate=200 slo-e2e-ms=60000 slo-attainment=0.9\n")
	require.Contains(t, string(data), " goodput-req/s\n")
	for _, u := range []string{"sched-ttft-p50-ms", "sched-ttft-p95-ms", "sched-e2e-p50-ms"} {
		require.Contains(t, res.Extra, u, "an open loop's line carries the scheduled clock")
		require.Contains(t, string(data), " "+u+" ")
	}
}

// TestCapacityOpenLoopTimeBenchtime: a time-based -benchtime is a schedule
// of that length: at 40/s constant, -benchtime 500ms schedules the 20
// requests due at 0, 25, ..., 475 ms.
func TestCapacityOpenLoopTimeBenchtime(t *testing.T) {
	clearEnv(t)
	t.Setenv(envRate, "40")
	t.Setenv(envArrival, "constant")
	setBenchtime(t, "500ms")
	var rep *artifact.Report
	testing.Benchmark(func(b *testing.B) {
		rep = Capacity(b, capacity.Workload{ContextTokens: 2048, Concurrency: 4, MaxTokens: 256},
			withFakeProfile("fast"), withOutDir(t.TempDir()))
	})
	require.NotNil(t, rep, "the benchmark failed")
	require.Equal(t, 20, rep.Requests)
	require.Equal(t, 475.0, *rep.AnvilGo.Requests[19].ScheduledMS)
}

// TestSweepFindsTheKnee runs Sweep under fake time against the in-memory
// fake with 3 slots: every probe is a sub-benchmark that writes its
// artifacts with anvil_go.search and anvil_go.slo, and the search returns
// exactly 3 (probes conc=1, 2, 4, 3).
func TestSweepFindsTheKnee(t *testing.T) {
	clearEnv(t)
	setBenchtime(t, "1x")
	// os/signal starts its watcher once per process; start it outside the
	// bubble, where it may outlive the test.
	_, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	stop()
	out := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		cfg, err := fakeserver.Slots(3, 200*time.Millisecond)
		require.NoError(t, err)
		srv := fakeserver.NewInMemory(cfg)
		defer srv.Close()
		var res capacity.SearchResult
		testing.Benchmark(func(b *testing.B) {
			res = Sweep(b, capacity.Workload{ContextTokens: 512},
				capacity.SearchSpec{Kind: "concurrency", Max: 16},
				WithTarget(capacity.Target{BaseURL: srv.URL + "/v1", HTTPClient: srv.Client(), Engine: "fake", GPU: "none"}),
				withOutDir(out), withProgress(false),
				WithSLO(capacity.SLO{TTFT: cfg.SlotPrefill + 100*time.Millisecond}))
		})
		require.Equal(t, 3.0, res.Best)
		require.Len(t, res.Runs, 4)
		var values []float64
		for _, r := range res.Runs {
			values = append(values, r.AnvilGo.Search.Value)
			require.NotNil(t, r.AnvilGo.SLO)
			require.Equal(t, 100, r.Requests, "probes are sized by ProbeRequests, not by -benchtime 1x")
		}
		require.Equal(t, []float64{1, 2, 4, 3}, values)
	})
	jsons, _ := filepath.Glob(filepath.Join(out, "*.json"))
	require.Len(t, jsons, 4, "every probe writes its artifacts")
	for _, p := range jsons {
		f, err := os.Open(p)
		require.NoError(t, err)
		r, err := artifact.Read(f)
		f.Close()
		require.NoError(t, err)
		require.NotNil(t, r.AnvilGo.Search, "%s", p)
		require.NotNil(t, r.AnvilGo.SLO, "%s", p)
		require.True(t, strings.Contains(filepath.Base(p), "conc-"), "named after the probe: %s", p)
	}
}

func TestProbeName(t *testing.T) {
	require.Equal(t, "conc=8", probeName(artifact.SearchProbe{Kind: "concurrency", Value: 8}))
	require.Equal(t, "rate=12.5", probeName(artifact.SearchProbe{Kind: "rate", Value: 12.5}))
}

// TestSweepNotes: a repeated search's log names each value's interval and
// verdict, how sure the knee is, the values that were not monotone and
// those whose runs had no steady window.
func TestSweepNotes(t *testing.T) {
	res := capacity.SearchResult{Kind: "concurrency", Best: 6, Failed: 7, Repeats: 3, Sure: true,
		Values: []capacity.SearchValue{
			{Value: 6, Attained: []float64{1, 1, 1}, Mean: 1, Low: 1, High: 1, Verdict: "pass"},
			{Value: 7, Attained: []float64{0.8, 0.79, 0.78}, Mean: 0.79, Low: 0.765, High: 0.815, Verdict: "fail", Unsteady: 2},
		},
		NonMonotone: []string{"attainment rose from 0.921 [0.854, 0.987] at concurrency 4 to 1.000 [1.000, 1.000] at 6: not monotone in the load"}}
	require.Equal(t, []string{
		"conc=6: attained 1.000 [1.000, 1.000] over 3 runs (95% t-interval): pass",
		"conc=7: attained 0.790 [0.765, 0.815] over 3 runs (95% t-interval): fail",
		"conc=7: 2 of 3 runs had no steady window (anvil_go.steady)",
		"knee 6 .. 7: sure at the 95% level",
		"attainment rose from 0.921 [0.854, 0.987] at concurrency 4 to 1.000 [1.000, 1.000] at 6: not monotone in the load",
	}, sweepNotes(res))
	res.Repeats, res.Sure, res.NonMonotone = 1, false, nil
	require.Equal(t, []string{"conc=7: 2 of 3 runs had no steady window (anvil_go.steady)"}, sweepNotes(res))
}

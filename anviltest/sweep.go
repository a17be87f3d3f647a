package anviltest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/artifact"
)

// Units of the best sub-benchmark of a Sweep.
const (
	// unitBestConcurrency is the highest concurrency that met the SLO.
	unitBestConcurrency = "best-conc"
	// unitBestRate is the highest request rate that met the SLO.
	unitBestRate = "best-req/s"
	// unitProbes is the number of probes the search ran.
	unitProbes = "probes"
)

// sweepBestName is the name of the last sub-benchmark of a Sweep, which
// carries the search's result. The testing package prints no line for a
// benchmark that has sub-benchmarks, so the parent's metric lives there.
const sweepBestName = "best"

// errProbeNotRun is the error of a probe whose sub-benchmark did not run
// or failed.
var errProbeNotRun = errors.New("anviltest: sweep probe did not produce a report")

// Sweep runs an SLO search (capacity.Search, capacity/PROTOCOL.md#anvil-go)
// as sub-benchmarks of b, one per probe, named conc=8 or rate=12.5, so
// benchstat shows the latency and goodput curve; each probe is an ordinary
// Capacity run with its artifacts written, carrying anvil_go.search and
// anvil_go.slo. A last sub-benchmark, "best", reports the best value
// (best-conc or best-req/s, the highest concurrency or request rate that
// met the SLO, and probes, the number of probes the search ran):
//
//	func BenchmarkKnee(b *testing.B) {
//		anviltest.Sweep(b, capacity.Workload{ContextTokens: 8192},
//			capacity.SearchSpec{Kind: "concurrency", Max: 64},
//			anviltest.WithSLO(capacity.SLO{TTFT: 500 * time.Millisecond}))
//	}
//
// The SLO comes from WithSLO, then ANVIL_SLO_TTFT, ANVIL_SLO_TPOT,
// ANVIL_SLO_E2E and ANVIL_SLO_ATTAINMENT; Sweep fails without one. Each
// probe has the requests capacity.Search gives it: -benchtime Nx raises the
// count to N when the Workload sets none, a time-based -benchtime only sets
// each sub-benchmark's minimum length (a probe is sized by count, so that
// its attainment means the same at every value). Filtering a probe out
// with -bench, or a probe that fails (for instance because none of its
// requests succeeded), ends the search with an error. Sweep returns the
// search's result.
func Sweep(b *testing.B, w capacity.Workload, spec capacity.SearchSpec, opts ...Option) capacity.SearchResult {
	b.Helper()
	s := newSettings(opts)
	if err := s.resolveSLO(); err != nil {
		b.Fatal(err)
	}
	if !s.slo.Set() {
		b.Fatalf("anviltest: Sweep needs an SLO: WithSLO, or %s, %s or %s", envSLOTTFT, envSLOTPOT, envSLOE2E)
	}
	bt, err := currentBenchtime()
	if err != nil {
		b.Fatal(err)
	}
	if w.Requests == 0 && bt.n > 0 {
		w.Requests = bt.n
	}
	slo := s.slo
	prober := capacity.ProberFunc(func(_ context.Context, pw capacity.Workload, p artifact.SearchProbe) (*artifact.Report, error) {
		var rep *artifact.Report
		name := probeName(p)
		popts := append(append([]Option(nil), opts...), WithSLO(slo), withProbe(p))
		ok := b.Run(name, func(b *testing.B) { rep = Capacity(b, pw, popts...) })
		if rep == nil || !ok {
			return rep, fmt.Errorf("%w: %s (filtered out by -bench, or failed: see its log)", errProbeNotRun, name)
		}
		return rep, nil
	})
	res, err := capacity.Search(b.Context(), prober, w, slo, spec)
	if err != nil {
		b.Fatalf("anviltest: sweep: %v", err)
	}
	unit := unitBestConcurrency
	if res.Kind == "rate" {
		unit = unitBestRate
	}
	b.Logf("sweep %s: best %g (found %t, at max %t, first failing %g) after %d probes, SLO %s",
		res.Kind, res.Best, res.Found, res.AtMax, res.Failed, len(res.Runs), slo)
	for _, line := range sweepNotes(res) {
		b.Log(line)
	}
	b.Run(sweepBestName, func(b *testing.B) {
		// No work to time: the loop runs out (-benchtime Nx: N empty
		// iterations; a time-based one: a wait), and ns/op is left out.
		if !finishLoop(b.Context(), b, bt, &loopGate{b: b}) {
			b.Fatal("anviltest: interrupted")
		}
		b.ReportMetric(0, "ns/op")
		b.ReportMetric(res.Best, unit)
		b.ReportMetric(float64(len(res.Runs)), unitProbes)
	})
	return res
}

// sweepNotes are the log lines of a search's confidence: with repeats,
// each value's attainment interval and verdict, whether the knee is sure,
// and the values that were not monotone; for any search, the values whose
// runs had no steady window.
func sweepNotes(res capacity.SearchResult) []string {
	var out []string
	for _, v := range res.Values {
		name := probeName(artifact.SearchProbe{Kind: res.Kind, Value: v.Value})
		if res.Repeats > 1 {
			out = append(out, fmt.Sprintf("%s: attained %.3f [%.3f, %.3f] over %d runs (95%% t-interval): %s",
				name, v.Mean, v.Low, v.High, len(v.Attained), v.Verdict))
		}
		if v.Unsteady > 0 {
			out = append(out, fmt.Sprintf("%s: %d of %d runs had no steady window (anvil_go.steady)", name, v.Unsteady, len(v.Attained)))
		}
	}
	if res.Repeats > 1 {
		sure := "not sure at the 95% level: an end of the knee is unsure"
		if res.Sure {
			sure = "sure at the 95% level"
		}
		out = append(out, fmt.Sprintf("knee %g .. %g: %s", res.Best, res.Failed, sure))
	}
	return append(out, res.NonMonotone...)
}

// probeName is the sub-benchmark name of a probe: conc=8 or rate=12.5.
func probeName(p artifact.SearchProbe) string {
	if p.Kind == "rate" {
		return "rate=" + strconv.FormatFloat(p.Value, 'g', -1, 64)
	}
	return "conc=" + strconv.FormatFloat(p.Value, 'f', 0, 64)
}

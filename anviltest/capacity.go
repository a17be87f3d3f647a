package anviltest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/reporters"
)

// Capacity runs one capacity campaign of w as the benchmark b, reports its
// metrics with b.ReportMetric, writes its artifacts and returns the report.
// Call it once per benchmark function (or sub-benchmark), never inside a
// b.Loop or b.N loop of your own:
//
//	func BenchmarkCapacity(b *testing.B) {
//		anviltest.Capacity(b, capacity.Workload{ContextTokens: 32768, Concurrency: 4, MaxTokens: 1024})
//	}
//
// One b.Loop iteration is one measured request: Capacity hands capacity.Run
// a capacity.Gate that calls b.Loop immediately before each measured
// request leaves (once it is due and a slot is free), so
//   - -benchtime Nx runs exactly N measured requests (in an open loop,
//     Workload.Rate or ANVIL_RATE, N scheduled requests);
//   - a time-based -benchtime D (the default 1s included) runs a campaign
//     of length D: no request is dispatched after D, in-flight requests
//     finish, and nothing waits after them (in an open loop, a schedule of
//     length D: every request due before D is sent);
//   - a Workload that sizes itself (Requests, Burst or Duration) wins over
//     -benchtime. When such a campaign ends before a time-based
//     -benchtime, Capacity waits idle for the rest of it (the testing
//     package stops a benchmark no earlier); its numbers are unaffected.
//
// The probe, the warm-up requests (Workload.Warmup or ANVIL_WARMUP, left out
// of the report) and the connection warm-up run before the loop's first
// iteration, and the benchmark function runs once per -count. The testing
// package prints b.Loop's iteration count: the requests sent, except that
// iterations the run did not use (a campaign sized by the Workload, a run
// that stopped early, or the rest of b.Loop's ramp-up step after a
// time-based -benchtime) are counted too. ns/op is always the run's wall
// time (drain included) per request sent, reported with the units of
// reporters.BenchResult after every request finished, and the .bench
// artifact's iteration count is the requests sent; null metrics are
// omitted. Failed requests are never latency samples; their count is the
// failed-req unit, and requests planned but never sent are unsent-req. A
// run in which no request succeeded writes its report and fails the
// benchmark: it has nothing to compare.
//
// The target comes from the options, then the environment (ANVIL_BASE_URL
// and the other ANVIL_* variables of the package documentation); without a base URL Capacity starts the
// embedded fake server. Artifacts (the v1 JSON and a .bench file) go to
// b.ArtifactDir() when -artifacts is set, else to $ANVIL_OUT, else to
// ./anvil-out; their paths are logged with b.Log.
//
// With an SLO (WithSLO or ANVIL_SLO_*) the report is judged against it
// (anvil_go.slo) and the line carries goodput-req/s.
//
// An interrupt (Ctrl-C) stops the campaign: the partial report is still
// written, marked not performance eligible, and the benchmark fails.
// Configuration errors and run errors fail the benchmark with b.Fatal,
// always from the benchmark goroutine.
func Capacity(b *testing.B, w capacity.Workload, opts ...Option) *artifact.Report {
	b.Helper()
	s := newSettings(opts)
	bt, err := currentBenchtime()
	if err != nil {
		b.Fatal(err)
	}
	sources := append(s.envFieldNames(), benchtimeFieldNames(w, bt)...)
	sized := sizesItself(w) // before -benchtime sizes it
	w, err = s.applyWorkloadEnv(planWorkload(w, bt))
	if err != nil {
		b.Fatal(err)
	}
	w, replaced, err := s.applyTraffic(w)
	if err != nil {
		b.Fatal(err)
	}
	sized = sized || replaced // a trace or sessions fix the campaign's size
	if _, err := w.Resolved(); err != nil {
		b.Fatalf("anviltest: workload: %v", explainFields(err, sources...))
	}
	began := time.Now() // a shard's start may have passed before it began
	if err := s.resolveSLO(); err != nil {
		b.Fatal(err)
	}
	t, err := s.resolveTarget()
	if err != nil {
		b.Fatal(err)
	}
	if t.BaseURL == "" {
		t, err = s.startFake(b, t)
		if err != nil {
			b.Fatal(err)
		}
	} else if note := identityNote(t); note != "" {
		b.Log(note)
	}
	dir, err := s.artifactDir(b)
	if err != nil {
		b.Fatal(err)
	}

	ctx, stop := signal.NotifyContext(b.Context(), os.Interrupt)
	defer stop()
	var prog *progressLine
	progress, err := s.progressWanted(os.Stderr)
	if err != nil {
		b.Fatal(err)
	}
	switch view := viewOf(t, w); {
	case progress:
		prog = newProgressLine(os.Stderr, view, time.Now)
		w.Progress = prog.update
	case s.heartbeatWanted(os.Stderr):
		w.Progress = newHeartbeat(os.Stderr, b.Name(), view, time.Now).update
	}
	html, err := s.htmlWanted()
	if err != nil {
		b.Fatal(err)
	}

	// One b.Loop iteration per measured request: the gate calls b.Loop
	// on this goroutine immediately before each measured dispatch, so the
	// probe, the warm-up and the connection warm-up stay outside the loop
	// and the first call starts the benchmark's timer.
	// An open loop's schedule is fixed before the run (a time-based
	// -benchtime cut it to the requests due before it), and all of it is
	// sent.
	gate := &loopGate{b: b, sized: sized || w.OpenLoop()}
	w.Observers = append(append([]capacity.Observer(nil), w.Observers...), gate)
	rep, runErr := s.run(ctx, t, w)
	runErr = printableError(runErr) // it may quote what the server sent
	prog.clear()
	interrupted := ctx.Err() != nil && b.Context().Err() == nil
	stop() // a second interrupt ends the process as usual
	if rep == nil {
		if runErr == nil {
			runErr = fmt.Errorf("runner returned no report")
		}
		b.Fatalf("anviltest: capacity run: %v", withEnvNames(explainFields(runErr, sources...).Error()))
	}
	if interrupted {
		markInterrupted(rep)
	}
	recordBenchmark(rep, benchName(b, rep))
	if err := s.judge(rep); err != nil {
		b.Error(err)
	}
	paths, werr := writeArtifacts(dir, baseName(b, rep), benchName(b, rep), rep)
	if werr != nil {
		b.Errorf("anviltest: writing artifacts: %v", werr)
	} else {
		b.Logf("artifacts: %s %s", paths.json, paths.bench)
		if html {
			if page, err := writeHTMLReport(dir, processStart); err != nil {
				b.Errorf("anviltest: writing %s: %v", htmlReportName, err)
			} else {
				b.Logf("report: %s", page)
			}
		}
	}
	logOutcome(b, rep)
	switch {
	case interrupted:
		b.Fatalf("anviltest: interrupted: %d of %d planned requests sent, %d succeeded, %d never sent; the partial report is written, not performance eligible",
			rep.SentRequests(), rep.Requests, rep.Completed, rep.UnsentRequests())
	case errors.Is(runErr, capacity.ErrShardLate):
		b.Fatalf("anviltest: capacity run: %v; %s", runErr, lateShardAdvice(w.Shard, began))
	case runErr != nil && promptPlanWarning(rep) != "":
		// The cause to act on first: the prompts were not what was planned.
		b.Fatalf("anviltest: capacity run: %s; %v", withEnvNames(promptPlanWarning(rep)), withEnvNames(explainFields(runErr, sources...).Error()))
	case runErr != nil:
		b.Fatalf("anviltest: capacity run: %v", withEnvNames(explainFields(runErr, sources...).Error()))
	case rep.Requests <= 0:
		b.Fatalf("anviltest: the campaign dispatched no request (workload %s)", workloadIdentity(rep))
	case rep.Completed == 0:
		// Without one success there is no latency sample: the line would
		// carry only ns/op (the time to fail) and failed-req, which
		// benchstat would compare as if it were a measurement.
		none := fmt.Sprintf("none of the %d requests succeeded", rep.Requests)
		if rep.Requests == 1 {
			none = "the one request did not succeed"
		}
		if w := promptPlanWarning(rep); w != "" {
			b.Fatalf("anviltest: %s: %s (the report is written)", none, w)
		}
		b.Fatalf("anviltest: %s (failures by class above; the report is written)", none)
	}
	if !finishLoop(b.Context(), b, bt, gate) {
		b.Fatalf("anviltest: interrupted while waiting for -benchtime %s to elapse (report already written)", bt)
	}
	// ns/op is among the values: the run's wall time (drain included) per
	// measured request sent, whatever the iteration count b.Loop ended on.
	// Pinned by the child-process tests in iteration_test.go.
	res, err := reporters.BenchResult(rep, "")
	if err != nil {
		b.Fatalf("anviltest: %v", err)
	}
	for _, v := range res.Values {
		b.ReportMetric(v.Value, v.Unit)
	}
	return rep
}

// loopGate is the capacity.Gate of a benchmark: one b.Loop iteration per
// measured request. capacity.Run calls Admit on the goroutine that called
// it, the benchmark's, as b.Loop requires.
type loopGate struct {
	b *testing.B
	// sized says the campaign's size is fixed (a Workload that sizes
	// itself, which wins over -benchtime, or an open loop's schedule):
	// once b.Loop has said no, the rest is admitted without it.
	sized   bool
	started bool // b.Loop was called
	done    bool // b.Loop said no: it may not be called again
}

// Start implements capacity.Observer; the gate needs no end hook.
func (g *loopGate) Start(context.Context, time.Time) func(*artifact.Report) { return nil }

// Admit implements capacity.Gate: request i leaves when b.Loop says the
// benchmark goes on. With -benchtime Nx that is N times; with a time-based
// -benchtime b.Loop says no at its first check after the time is up (the
// run's own Duration ends the campaign at that time first).
func (g *loopGate) Admit(int) bool {
	if g.done {
		return g.sized
	}
	g.started = true
	if g.b.Loop() {
		return true
	}
	g.done = true
	return g.sized
}

// finishLoop drives b.Loop to its end so the testing package records one
// measurement: the iterations the run did not use (a campaign that sent
// fewer requests than -benchtime Nx, or ended before b.Loop's next check)
// are consumed at once. Only when a time-based -benchtime has not elapsed
// yet (a Workload that sizes itself, or a run that stopped early) does it
// wait for the rest. It reports false if ctx ends during that wait.
func finishLoop(ctx context.Context, b *testing.B, bt benchtime, g *loopGate) bool {
	if g.done {
		return true
	}
	if !g.started && !b.Loop() {
		return true
	}
	for {
		if rem := bt.d - b.Elapsed(); bt.n == 0 && rem > 0 {
			t := time.NewTimer(rem)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return false
			}
		}
		if !b.Loop() {
			return true
		}
	}
}

// markInterrupted makes sure an interrupted run's report is not
// performance eligible, whatever the runner recorded.
func markInterrupted(r *artifact.Report) {
	r.PerformanceEligible = false
	r.MetricPopulation.AggregateThroughputEligible = false
	r.Metrics.ThroughputPerformanceEligible = false
	r.Metrics.ThroughputTokS = nil
}

// logOutcome logs reporters.RunLog of the finished run: its population
// (requests planned but never sent counted apart from the failed ones),
// the notes on its plan and its connections, the client's audit when
// suspect, the server-metrics cross-checks and the failure classes, so
// failures stay visible next to the numbers. The window's source is named
// by its variable (withEnvNames).
func logOutcome(b *testing.B, r *artifact.Report) {
	b.Helper()
	for _, line := range reporters.RunLog(r) {
		b.Log(withEnvNames(line))
	}
}

// promptPlanWarning is the run's warning about prompts counted off their
// plan (anvil_go.prompt_sizing.warning), made Printable; "" when the
// artifact records none.
func promptPlanWarning(r *artifact.Report) string {
	if r.AnvilGo == nil || r.AnvilGo.PromptSizing == nil || r.AnvilGo.PromptSizing.Warning == nil {
		return ""
	}
	return reporters.Printable(*r.AnvilGo.PromptSizing.Warning)
}

// identityNote says which identity of a real endpoint is unset: the
// artifact then records null and the .bench file has no such key, so runs
// of different engines or GPUs cannot be told apart. Empty when both are
// set.
func identityNote(t capacity.Target) string {
	var vars, keys []string
	if t.Engine == "" {
		vars, keys = append(vars, envEngine), append(keys, "engine")
	}
	if t.GPU == "" {
		vars, keys = append(vars, envGPU), append(keys, "gpu")
	}
	if len(vars) == 0 {
		return ""
	}
	return fmt.Sprintf("%s not set: the artifact and the .bench file carry no %s, so benchstat cannot tell runs on different setups apart",
		strings.Join(vars, " and "), strings.Join(keys, " or "))
}

// baseName is b's name, or for a benchmark run by testing.Benchmark (which
// has none) the name reporters.BenchResult gives the report.
func baseName(b *testing.B, r *artifact.Report) string {
	if name := b.Name(); name != "" {
		return name
	}
	res, err := reporters.BenchResult(r, "")
	if err != nil {
		return "Benchmark"
	}
	return "Benchmark" + string(res.Name)
}

// workloadIdentity is the workload configuration value of r's .bench
// result (the keys that must match for two runs to be compared).
func workloadIdentity(r *artifact.Report) string {
	res, err := reporters.BenchResult(r, "")
	if err != nil {
		return "unknown"
	}
	for _, c := range res.Config {
		if c.Key == "workload" {
			return string(c.Value)
		}
	}
	return "unknown"
}

// benchName is the name the testing package prints for b, GOMAXPROCS
// suffix included, so .bench files line up with `go test -bench` output.
func benchName(b *testing.B, r *artifact.Report) string {
	name := baseName(b, r)
	if p := runtime.GOMAXPROCS(0); p != 1 {
		name = fmt.Sprintf("%s-%d", name, p)
	}
	return name
}

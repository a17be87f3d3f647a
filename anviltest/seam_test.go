package anviltest

import (
	"context"
	"fmt"
	"math"
	"os"
	"testing"
	"time"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/artifact"
)

// The step runner is a deterministic stand-in for capacity.Run: a closed
// loop in which every request takes exactly stepE2E, so the benchmark line
// of each iteration mode is known in advance.
const (
	stepTTFO     = 20 * time.Millisecond
	stepTTFT     = 40 * time.Millisecond
	stepE2E      = 100 * time.Millisecond
	stepOutput   = 51   // output tokens: 50 decode tokens over 80 ms
	stepPrompt   = 1000 // prompt tokens
	stepStartsNS = int64(1_800_000_000_000_000_000)
)

// seamEnv selects the step runner's behaviour in the child benchmark
// BenchmarkSeam; unset, BenchmarkSeam skips.
const seamEnv = "ANVILTEST_SEAM" // not ANVIL_*: anviltest would refuse it as unknown

// stepRun runs w in simulated time. Workload.Duration D dispatches waves of
// Concurrency requests at 0, stepE2E, 2*stepE2E, ... while the wave starts
// before D; otherwise Workload.Requests requests run in waves. Requests
// whose index is in fail fail with an HTTP 503.
func stepRun(fail map[int]bool) runFunc {
	return func(ctx context.Context, t capacity.Target, w capacity.Workload) (*artifact.Report, error) {
		w, err := w.Resolved()
		if err != nil {
			return nil, err
		}
		n := w.Requests
		if w.Duration > 0 {
			waves := int(math.Ceil(float64(w.Duration) / float64(stepE2E)))
			n = min(n, waves*w.Concurrency)
		}
		n = admit(w, n)
		waves := (n + w.Concurrency - 1) / w.Concurrency
		return stepReport(t, w, n, time.Duration(waves)*stepE2E, fail)
	}
}

// admit asks the workload's gates to admit n requests in turn, as
// capacity.Run does before each measured dispatch, and returns how many
// they admitted.
func admit(w capacity.Workload, n int) int {
	for i := range n {
		for _, o := range w.Observers {
			if g, ok := o.(capacity.Gate); ok && !g.Admit(i) {
				return i
			}
		}
	}
	return n
}

// stepReport builds the report of n step requests over wall.
func stepReport(t capacity.Target, w capacity.Workload, n int, wall time.Duration, fail map[int]bool) (*artifact.Report, error) {
	ctx := w.ContextTokens
	engine, gpu := t.Engine, t.GPU
	r := &artifact.Report{
		Schema:                 artifact.Schema,
		RunID:                  "benchmark-20270115T080000Z",
		StartedAt:              "2027-01-15T08:00:00Z",
		StartedAtUnixNS:        stepStartsNS,
		FinishedAtUnixNS:       stepStartsNS + int64(wall),
		WallClockMS:            float64(wall) / 1e6,
		BaseURL:                t.BaseURL,
		Model:                  "step-model",
		Engine:                 &engine,
		GPU:                    &gpu,
		Requests:               n,
		Concurrency:            w.Concurrency,
		MaxTokens:              w.MaxTokens,
		ContextTokens:          &ctx,
		ContextDistribution:    map[int]int{ctx: n},
		SharedPrefixTokens:     w.SharedPrefixTokens,
		PromptCacheMode:        string(w.PromptCacheMode),
		ControlledOutputPolicy: string(w.ControlledOutputPolicy),
		ServeFlags:             artifact.ServeFlags{ThinkingMode: string(w.ThinkingMode)},
	}
	r.FinishedAt = time.Unix(0, r.FinishedAtUnixNS).UTC().Format(time.RFC3339)
	for i := range n {
		if fail[i] {
			status := 503
			r.Failures = append(r.Failures, artifact.Failure{
				RequestIndex: i, PlannedContextTokens: ctx, FailureClass: artifact.FailureHTTPError,
				ErrorType: "http_error", ErrorMessage: "HTTP 503: overloaded", HTTPStatus: &status,
				ResponseReceived: true, ElapsedMS: 5,
			})
			continue
		}
		r.RequestTimings = append(r.RequestTimings, stepRow(i, ctx))
	}
	r.Completed = len(r.RequestTimings)
	r.Failed = len(r.Failures)
	r.ResponsesReceived = n
	if err := r.Recompute(); err != nil {
		return nil, err
	}
	return r, nil
}

func stepRow(i, ctx int) artifact.TimingRow {
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	prompt := stepPrompt
	gen := ms(stepE2E - stepTTFO)
	decode := float64(stepOutput-1) / (gen / 1000)
	tpot := gen / float64(stepOutput-1)
	prefill := float64(stepPrompt) / (ms(stepTTFO) / 1000)
	return artifact.TimingRow{
		RequestIndex: i, PlannedContextTokens: ctx, PromptTokens: &prompt,
		OutputTokens: new(stepOutput), OutputTokenSource: artifact.SourceUsage,
		ContentChunks: 10, ReasoningChunks: 0,
		TimeToFirstOutputMS: ms(stepTTFO), TTFTMS: ms(stepTTFT), E2EMS: ms(stepE2E),
		GenerationMS: gen, VisibleGenerationMS: ms(stepE2E - stepTTFT),
		EffectivePrefillTokS: &prefill, DecodeTokS: &decode,
		TPOTMS: &tpot, MeanTimePerOutputTokenMS: &tpot, MeanInterTokenLatencyMS: &tpot,
	}
}

// interruptRun sends the process an interrupt once two requests finished,
// as Ctrl-C would, and returns the partial report when the run's context
// ends: two successes and the cancelled in-flight request.
func interruptRun(ctx context.Context, t capacity.Target, w capacity.Workload) (*artifact.Report, error) {
	w, err := w.Resolved()
	if err != nil {
		return nil, err
	}
	if err := interruptSelf(); err != nil {
		return nil, err
	}
	<-ctx.Done()
	r, err := stepReport(t, w, 3, 2*stepE2E, map[int]bool{2: true})
	if err != nil {
		return nil, err
	}
	r.Failures[0].FailureClass = artifact.FailureCancelled
	r.Failures[0].ErrorMessage = ctx.Err().Error()
	return r, ctx.Err()
}

// unsentRun returns a run of planned requests of which only sent were
// issued before the run stopped (interrupt: by an interrupt, which it
// sends itself as Ctrl-C would): the first failSent of the sent ones
// failed with an HTTP 503, the other sent ones succeeded, and the
// requests never sent are "cancelled" failures of the v1 document, told
// apart by anvil_go.run.
func unsentRun(planned, sent, failSent int, interrupt bool) runFunc {
	return func(ctx context.Context, t capacity.Target, w capacity.Workload) (*artifact.Report, error) {
		w, err := w.Resolved()
		if err != nil {
			return nil, err
		}
		sent = admit(w, sent)
		var runErr error
		if interrupt {
			if err := interruptSelf(); err != nil {
				return nil, err
			}
			<-ctx.Done()
			runErr = ctx.Err()
		}
		fail := map[int]bool{}
		for i := range failSent {
			fail[i] = true
		}
		for i := sent; i < planned; i++ {
			fail[i] = true
		}
		waves := (sent + w.Concurrency - 1) / w.Concurrency
		r, err := stepReport(t, w, planned, time.Duration(waves)*stepE2E, fail)
		if err != nil {
			return nil, err
		}
		x := &artifact.Extension{Version: 1,
			Run: &artifact.RunSummary{SentRequests: sent, NeverSentRequests: planned - sent, Interrupted: true}}
		for i := range r.Failures {
			if f := &r.Failures[i]; f.RequestIndex >= sent {
				f.FailureClass, f.ErrorType, f.ErrorMessage = artifact.FailureCancelled, "cancelled", "never sent: the run stopped"
				f.HTTPStatus, f.ResponseReceived, f.ElapsedMS = nil, false, 0
			}
		}
		for i := range planned {
			d := artifact.RequestDetail{RequestIndex: i, Outcome: artifact.OutcomeSuccess, PlannedPromptTokens: w.ContextTokens}
			switch {
			case i >= sent:
				d.Outcome = artifact.OutcomeNeverSent
			case fail[i]:
				d.Outcome = string(artifact.FailureHTTPError)
			}
			x.Requests = append(x.Requests, d)
		}
		r.AnvilGo = x
		if err := r.Recompute(); err != nil {
			return nil, err
		}
		r.PerformanceEligible = false
		return r, runErr
	}
}

// BenchmarkSeam is the child benchmark of the iteration-mode tests: it runs
// Capacity against the step runner as ANVILTEST_SEAM selects.
func BenchmarkSeam(b *testing.B) {
	opt := withRunFunc(stepRun(nil))
	w := capacity.Workload{ContextTokens: 4096, Concurrency: 2}
	switch mode := os.Getenv(seamEnv); mode {
	case "":
		b.Skip("run by the iteration-mode tests with " + seamEnv + " set")
	case "plain":
	case "requests":
		w.Requests = 5
	case "failures":
		opt = withRunFunc(stepRun(map[int]bool{0: true, 3: true}))
	case "allfail":
		opt = withRunFunc(stepRun(map[int]bool{0: true, 1: true, 2: true}))
	case "interrupt":
		opt = withRunFunc(interruptRun)
	case "interrupt-unsent":
		// Ctrl-C after 23 of 400 requests: 15 succeeded, 8 failed.
		opt = withRunFunc(unsentRun(400, 23, 8, true))
	case "engine":
		// The engine itself, against ANVIL_BASE_URL.
		opt = nil
	case "stopped-unsent":
		// A run that stopped by itself after 6 of 10 requests.
		opt = withRunFunc(unsentRun(10, 6, 0, false))
	default:
		b.Fatalf("%s=%q: unknown mode", seamEnv, mode)
	}
	r := Capacity(b, w, opt)
	// b.N is b.Loop's count: every request sent took one iteration.
	if r == nil || r.SentRequests() > b.N {
		panic(fmt.Sprintf("Capacity returned %v after %d b.Loop iterations", r, b.N))
	}
}

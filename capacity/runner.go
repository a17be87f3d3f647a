package capacity

import (
	"context"
	"fmt"
	"net/http"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/itl"
	"github.com/anvilbench/anvil/capacity/internal/progress"
	"github.com/anvilbench/anvil/capacity/internal/report"
	"github.com/anvilbench/anvil/capacity/internal/steady"
)

// maxPanicStack bounds the stack trace kept in a runner_error message.
const maxPanicStack = 1024

// result is the outcome of one measured request: what the report keeps
// of it, and what the run itself needs.
type result struct {
	report.Result
	received bool
	// answer is the visible content the capture kept, answerCut whether
	// some was dropped; set only for a Source that is an Answerer.
	answer    string
	answerCut bool
	// promptChars is the characters of the prompt's messages (exact
	// sizing's chars_per_token).
	promptChars int
}

// runner executes the plan of one run: the warm-up as a closed loop of
// workers (warmup), each with one request in flight, dispatching request
// indexes in order, then the measured requests through the run's seams
// (measure, dispatch.go).
type runner struct {
	plan        *plan
	cl          *client.Client
	enc         *client.Encoder // the plan's request bodies
	concurrency int
	maxFailures int
	duration    time.Duration
	// scheduled says the Duration already cut an arrival schedule, so
	// every request of it is sent whatever the time.
	scheduled bool
	// keepGoing turns the early stop off (Workload.KeepGoing).
	keepGoing bool
	feed      *progress.Feed[Progress] // Workload.Progress's calls; nil without one
	// bodies builds the bodies of requests a Workload.Source describes.
	bodies *sourceBodies

	mu         sync.Mutex // guards everything below and calls to progress
	warming    bool
	phaseStart time.Time
	n          int // indexes of the current phase
	dispatched int // of the current phase
	inFlight   int
	succeeded  int
	failed     int
	anyOK      bool   // a 2xx response arrived
	refusal    string // the first refusal, "" when none
	stopped    bool   // no more dispatch (max failures, refusal, early stop)
	expired    bool   // the campaign Duration elapsed, or a Gate said no
	earlyStop  string // why the early stop stopped the run, "" when it did not
	permanent  int    // measured failures that will not change, before any success
	results    []result
	flights    progress.Flights // the current phase's requests in flight, for Progress.Oldest

	stallRule itl.StallRule // applied to every measured stream
	chunks    *itl.Run      // the measured phase's chunk timing, set when it ends

	prewarmed int // live connections the measured phase started with (prewarm)
	// warm is the warm-up's rule, warmLog its requests, warmSent the
	// warm-up requests it sent (warmup.go).
	warm     warmupRule
	warmLog  *warmupLog
	warmSent int
	// dues has bit 1<<k set once the measured phase dispatched a request
	// of dueKind k; the dispatcher's alone until the phase ends.
	dues uint8

	owned []int // a shard's measured indexes, ascending (Shard.indexes); nil: the whole plan
}

// warmup runs the warm-up requests of rule with the runner's
// concurrency, as a closed loop of workers, and returns when every
// dispatched request has finished: rule.count of them, none sent after
// rule.limit, and for a warm-up until steady none once its requests were
// steady (warmup.go). ctx ends it: undispatched requests are not sent.
func (r *runner) warmup(ctx context.Context, rule warmupRule) {
	now := time.Now()
	r.mu.Lock()
	r.warming, r.n, r.dispatched, r.phaseStart = true, rule.count, 0, now
	r.warm, r.warmLog = rule, &warmupLog{start: now}
	r.flights.Reset()
	r.mu.Unlock()
	r.feed.Attach(r.snapshot)
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var wg sync.WaitGroup
	for range min(r.concurrency, rule.count) {
		wg.Go(func() { r.worker(runCtx, stop) })
	}
	wg.Wait()
	r.mu.Lock()
	r.warmLog.elapsed, r.warmSent = time.Since(now), r.dispatched
	r.mu.Unlock()
}

// worker sends warm-up requests until none is left. Request bodies are
// streamed from the plan (prompt.Layout.Body): a worker holds no prompt.
func (r *runner) worker(ctx context.Context, stop context.CancelCauseFunc) {
	for {
		i, ok := r.next(ctx)
		if !ok {
			return
		}
		res := r.one(ctx, i, true, nil, nil, false)
		if r.record(res, true) {
			stop(errRunStopped)
		}
	}
}

// next dispatches the next warm-up index, or reports that none is left.
func (r *runner) next(ctx context.Context) (int, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ctx.Err() != nil || r.stopped || r.dispatched >= r.n {
		return 0, false
	}
	now := time.Now()
	if r.warm.limit > 0 && now.Sub(r.warmLog.start) >= r.warm.limit || r.warm.steady && r.warmLog.steadyNow(now, r.concurrency) {
		return 0, false
	}
	i := r.dispatched
	r.warmLog.sent(i, now)
	r.dispatched++
	r.inFlight++
	r.flights.Out(i, now)
	r.report()
	return i, true
}

// record files the outcome of a request and reports whether the run must
// stop at once (the endpoint refused it).
func (r *runner) record(res *result, warmup bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inFlight--
	r.flights.Back(res.Index)
	refusedNow := false
	if st := statusOf(res); st >= 200 && st < 300 {
		r.anyOK = true
	} else if !r.anyOK && r.refusal == "" && (st == http.StatusUnauthorized || st == http.StatusForbidden || st == http.StatusNotFound) {
		r.refusal = res.Fail.ErrorMessage
		r.stopped, refusedNow = true, true
	}
	if warmup {
		r.warmLog.ended(res.Index, *res)
	} else {
		r.results = append(r.results, *res)
		if res.Fail != nil {
			r.failed++
			if r.maxFailures > 0 && r.failed >= r.maxFailures {
				r.stopped = true
			}
			r.earlyStopOn(res.Fail)
		} else {
			r.succeeded++
		}
	}
	r.report()
	return refusedNow
}

// statusOf returns the HTTP status a request received (0 when none).
func statusOf(res *result) int {
	switch {
	case res.Fail == nil:
		return http.StatusOK
	case res.Fail.HTTPStatus != nil:
		return *res.Fail.HTTPStatus
	}
	return 0
}

// report passes the runner's state on to Workload.Progress; r.mu is held.
func (r *runner) report() {
	if r.feed == nil {
		return
	}
	r.feed.Pass(r.progressLocked(), r.feed.Next())
}

// snapshot is the runner's state for a tick of the feed, and the
// sequence number of the moment it was taken.
func (r *runner) snapshot() (Progress, uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.progressLocked(), r.feed.Next()
}

// progressLocked is the runner's state as a Progress; r.mu is held.
func (r *runner) progressLocked() Progress {
	now := time.Now()
	p := Progress{
		Phase:      phaseMeasured,
		Planned:    r.n,
		Dispatched: r.dispatched,
		Succeeded:  r.succeeded,
		Failed:     r.failed,
		InFlight:   r.inFlight,
		Oldest:     r.flights.Oldest(now),
		Elapsed:    now.Sub(r.phaseStart),
	}
	if r.warming {
		p.Phase, p.Warmup = phaseWarmup, true
		p.Planned, p.Dispatched = r.plan.Len(), 0
	}
	return p
}

// one sends request i and evaluates it. A panic anywhere in it becomes a
// runner_error failure of that request; the worker goes on.
//
// req is what a Workload.Source said request i is (nil for warm-up
// requests); answer asks for the visible content in res.answer.
func (r *runner) one(ctx context.Context, i int, warmup bool, timer *client.ChunkTimer, req *Request, answer bool) (res *result) {
	res = new(result)
	planned := r.plan.Contexts[i%r.plan.Len()]
	res.Index = i
	start := time.Now()
	res.Clock.Taken = start
	defer func() {
		if p := recover(); p != nil {
			clock := res.Clock
			stack, _ := client.CutOnRune(r.cl.Scrub(string(debug.Stack())), maxPanicStack) // scrubbed before any cut
			f := &artifact.Failure{
				RequestIndex: i, PlannedContextTokens: planned, FailureClass: artifact.FailureRunnerError,
				ErrorType: client.ErrorTypePanic, ElapsedMS: client.MS(time.Since(start)),
			}
			f.SetErrorMessage(r.cl.Scrub(fmt.Sprintf("panic in the request worker: %v\n%s", p, stack)))
			*res = result{Result: report.Result{Index: i, Fail: f, Clock: clock}}
		}
	}()
	ex := &client.Exchange{Index: i, Unmeasured: warmup}
	body, ok := r.requestBody(i, warmup, req, &planned, res, ex)
	if !ok {
		return res
	}
	if timer != nil {
		timer.Begin(ex, start)
	}
	r.cl.Send(ctx, body, ex)
	r.evaluate(ex, res, start, timer, answer)
	return res
}

// requestBody returns the body of request i (one's arguments) and records
// in planned, res and ex what it says of the request; false when what a
// Workload.Source described cannot be sent, res then being its failure.
// It and evaluate are functions of their own so that their frames are not
// on the request goroutine's stack while it reads the stream: a shallower
// stack is a smaller one once the garbage collector shrinks it.
func (r *runner) requestBody(i int, warmup bool, req *Request, planned *int, res *result, ex *client.Exchange) (client.Body, bool) {
	var (
		body client.Body
		err  error
	)
	switch {
	case warmup:
		body, err = r.plan.warmupBody(r.enc, i)
	case req == nil || req.plan:
		body, err = r.plan.measuredBody(r.enc, i)
		res.promptChars = r.plan.promptChars(i)
		if r.plan.least != nil {
			res.Least = r.plan.least[i]
		}
	default:
		var sb sourceBody
		if sb, err = r.bodies.build(i, *req); err != nil {
			// What the source described cannot be sent: a failure of
			// the request, never a request the server sees.
			*planned = max(req.PromptTokens, 0)
			r.plan.Contexts[i] = *planned // this goroutine's index alone; read once the phase ended
			*res = result{Result: report.Result{Index: i, Clock: res.Clock, Fail: runnerFailure(i, *planned, err, r.cl.Scrub)}}
			return nil, false
		}
		body, ex.MaxTokens, ex.Inputs = sb.body, sb.maxTokens, sb.inputs
		*planned = sb.planned
		r.plan.Contexts[i] = *planned // this goroutine's index alone; read once the phase ended
		res.Source = &report.Source{Session: req.Session, Turn: req.Turn, MaxTokens: sb.maxTokens,
			Prefixed: req.Messages == nil && len(req.PrefixBlocks) == 0}
		res.promptChars, res.Least = sb.chars, req.LeastTokens
	}
	if err != nil {
		panic(err) // the plan covers every index the runner dispatches
	}
	ex.Planned = *planned
	return body, true
}

// evaluate records in res what the exchange ex, sent at start, saw and how
// it is judged.
func (r *runner) evaluate(ex *client.Exchange, res *result, start time.Time, timer *client.ChunkTimer, answer bool) {
	res.received = ex.Received()
	res.Clock = client.Clock{Taken: start, Sent: ex.Start(), End: ex.End(),
		FirstOutput: ex.FirstOutput(), FirstContent: ex.FirstContent()}
	if answer {
		res.answer, res.answerCut = ex.Answer()
	}
	res.Row, res.Fail = r.cl.Evaluate(ex)
	res.PromptTokens = ex.CountedPromptTokens() // usage as checked by Evaluate, or a refusal's count
	res.Phases = ex.Phases()
	if res.Source != nil {
		res.Source.Completion = ex.CompletionTokens()
		res.Source.Cached = ex.CachedTokens()
	}
	res.ServerTimings = ex.ServerTimings()
	if res.Row != nil {
		res.CacheRatio = ex.CacheRatio()
	}
	if timer != nil {
		res.Chunks = timer.Finish(res.Row != nil, ex.CompletionTokens())
	}
}

// steadyLoad is the load the steady-state test holds the run to
// (capacity/PROTOCOL.md#steady): a closed loop's requests in flight, the
// rate of a schedule of due times, or nothing for requests due after
// others ended (sessions).
func (r *runner) steadyLoad() string {
	switch {
	case r.dues&(1<<dueAfter) != 0:
		return steady.None
	case r.dues&(1<<dueAt) != 0:
		return steady.Rate
	}
	return steady.InFlight
}

// measured returns the measured results sorted by request index.
func (r *runner) measured() []result {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.results)
	slices.SortFunc(out, func(a, b result) int { return a.Index - b.Index })
	return out
}

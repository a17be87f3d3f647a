package capacity

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/h1"
)

// Run runs the capacity protocol of the anvil-serving.benchmark/v1 artifact:
// it validates t and w (errors wrap ErrInvalidConfig), asks GET
// {BaseURL}/models for the model and its context length when t leaves
// either out (waiting at most w.Timeout for the answer), resolves the
// plan, warms up (w.Warmup requests, for w.WarmupFor, or until steady:
// left out of the report), then sends the
// measured requests with w.Concurrency in flight (an open loop, w.Rate >
// 0: at their scheduled times, at most w.Concurrency in flight), and
// returns the Report, recomputed (see Report.Recompute).
//
// Request failures are rows of the report, not errors. The error is for an
// invalid configuration, a failed probe, or an endpoint that refuses the
// run outright: a 401, 403 or 404 before any successful response stops the
// run and wraps ErrEndpointRefused; the report of what was measured until
// then is returned with it when there is one.
//
// Cancelling ctx stops the run promptly: in-flight requests end as
// "cancelled" failures, so do the planned requests never sent, and the
// report of what finished is returned with a nil error.
//
// No error and no report carries a credential of the run (the API key,
// any Target.Headers value, the base URL's userinfo), whatever the server
// echoed: see capacity/PROTOCOL.md#failure-classes.
func Run(ctx context.Context, t Target, w Workload) (*artifact.Report, error) {
	var sec client.Secrets
	rep, err := run(ctx, t, w, &sec)
	return rep, sec.Redact(err)
}

// run is Run; it sets *sec to the run's credentials as soon as they are
// known, for Run to scrub the error.
func run(ctx context.Context, t Target, w Workload, sec *client.Secrets) (*artifact.Report, error) {
	w, err := w.Resolved()
	if err != nil {
		return nil, err
	}
	t, err = t.Resolved()
	if err != nil {
		return nil, err
	}
	if err := checkAPI(t, w); err != nil {
		return nil, err
	}
	baseURL, err := redactBaseURL(t.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("%w: Target.BaseURL: %w", ErrInvalidConfig, err)
	}
	key, err := t.apiKey()
	if err != nil {
		return nil, err
	}
	sh := w.Shard
	concurrency := shardConcurrency(w) // a closed-loop shard's share of the workers
	if sh.Count > 0 {
		if err := shardNeedsClock(t); err != nil {
			return nil, err
		}
	}
	if err := client.EnsureFileLimit(concurrency); err != nil {
		return nil, err
	}
	*sec = t.secrets(key)
	hc, own := t.HTTPClient, (*http.Transport)(nil)
	if hc == nil {
		own = newTransport(concurrency)
		var closeIdle func()
		hc, closeIdle = ownClient(own)
		defer closeIdle()
	}
	// Every request of the run, probes included, follows one connection
	// rule (capacity/PROTOCOL.md#connection-rule).
	hc, _ = client.WithConnectionRule(hc, own)

	feed := newProgressFeed(w.Progress) // phaseDiscovery, every second from here on
	defer feed.Close()
	disc, err := discover(ctx, hc, t, key, w.Timeout)
	if err != nil {
		return nil, err
	}
	disc.NoteSlots(w.Concurrency) // the whole workload's: shards share the server's slots
	extra, err := extraBodyRecord(t.ExtraBody, sec.Scrub)
	if err != nil {
		return nil, err
	}
	t.Model = disc.Model
	maxModelLen := disc.Window
	builtin, release, err := builtinObservers(ctx, t, key, sec.Scrub)
	defer release()
	if err != nil {
		return nil, err
	}
	nonce := ""
	if w.PromptCacheMode == promptCacheUnique && !w.OmitUniqueNonce {
		if nonce, err = newNonce(); err != nil {
			return nil, err
		}
		if sh.Count > 0 {
			nonce = shardNonce(sh, w.Seed)
		}
	}
	plan, err := newPlan(w, maxModelLen, t.margin(), nonce)
	if err != nil {
		return nil, err
	}
	schedule, err := openLoopSchedule(w, plan)
	if err != nil {
		return nil, err
	}
	plan.Workload.Concurrency, w.Concurrency = concurrency, concurrency
	cfg := clientConfig(t, plan.Workload, hc, key)
	cfg.Checks.Window, cfg.Checks.WindowFrom = disc.TruncationWindow, disc.TruncationWindowFrom()
	cl, err := client.New(cfg)
	if err != nil {
		return nil, err
	}
	enc, err := newRequestEncoder(cfg.Dialect, t, plan.Workload)
	if err != nil {
		return nil, err
	}
	if w.PromptSizing == promptSizingExact {
		feed.Enter(phaseCalibration)
		if err := sizePrompts(ctx, plan, t, cl, disc.TruncationWindow); err != nil {
			return nil, err
		}
	}
	r := &runner{
		plan: plan, cl: cl, enc: enc, concurrency: w.Concurrency,
		maxFailures: w.MaxFailures, duration: w.Duration, scheduled: schedule != nil, keepGoing: w.KeepGoing, feed: feed,
		stallRule: stallRule(w),
		bodies:    &sourceBodies{dialect: cfg.Dialect, target: t, w: plan.Workload, plan: plan, window: disc.TruncationWindow},
		owned:     sh.indexes(plan.Len()),
	}
	var shard *artifact.Shard
	if sh.Count > 0 {
		fp, err := planFingerprint(plan, schedule)
		if err != nil {
			return nil, err
		}
		shard = shardOf(sh, t, fp)
	}
	warm := warmupOf(w, plan)
	if warm.kind != "" {
		r.warmup(ctx, warm)
		if r.refusal != "" {
			return nil, fmt.Errorf("%w during warm-up: %s", ErrEndpointRefused, r.refusal)
		}
	}
	// Connections ready before the clock: as many live connections as
	// requests will be in flight, so that no measured request pays a dial.
	// Only in Run's own pool, sized for the run: a Target.HTTPClient's pool
	// is the caller's (http.DefaultTransport keeps two idle connections a
	// host, and would close the rest again).
	if t.HTTPClient == nil && ctx.Err() == nil {
		feed.Enter(phaseConnections)
		r.prewarmed = cl.Prewarm(ctx, min(w.Concurrency, len(r.indexes())), min(client.PrewarmLimit, w.Timeout))
	}
	primeObservers(ctx, builtin) // the metrics' first sample, with nothing in flight
	start, startErr := time.Now(), error(nil)
	if sh.Count > 0 {
		feed.Enter(phaseStart)
		start, startErr = waitStart(ctx, sh) // ErrShardLate: the measured phase sends nothing
	}
	// The measured phase starts even when ctx is already done (it then
	// dispatches nothing), so the report accounts for the measured plan,
	// never for the warm-up's dispatch state.
	s := seamsOf(w, plan, schedule) // after the warm-up, which follows the synthetic plan
	obsCtx, obsDone := context.WithCancel(ctx)
	defer obsDone()
	probes, err := newProbeTraffic(t, plan.Workload, key, r.bodies)
	if err != nil {
		return nil, err
	}
	// The probes come first: they stop (Finish) before the built-ins take
	// their end readings, and record their member before the
	// server-metrics checks, which count their tokens.
	var observers []Observer
	if probes != nil {
		observers = append(observers, probes)
	}
	observers = append(append(observers, builtin...), w.Observers...)
	ends := startObservers(obsCtx, start, observers)
	var measureErr error
	if startErr == nil {
		measureErr = r.measure(ctx, start, s)
	}
	end := time.Now() // the phase's end: every measured request has ended
	finishObservers(observers)

	rep, err := assemble(runFacts{
		target: t, baseURL: baseURL, workload: plan.Workload, plan: plan,
		start: start, end: end, cancelled: ctx.Err() != nil || startErr != nil, runner: r, schedule: shardOffsets(schedule, r.owned),
	})
	if rep != nil && rep.AnvilGo != nil {
		rep.AnvilGo.ContextWindow = disc.Record()
		if rep.AnvilGo.Run != nil {
			rep.AnvilGo.Run.ExtraBody = extra
		}
		warm.record(rep.AnvilGo.Run, r.warmSent, r.warmLog)
	}
	if rep != nil && shard != nil {
		recordShard(rep, shard, r, startErr)
	}
	if rep != nil {
		for _, end := range ends {
			end(rep)
		}
	}
	switch {
	case err != nil:
		return rep, err
	case startErr != nil:
		return rep, startErr
	case measureErr != nil:
		return rep, measureErr
	case r.refusal != "":
		return rep, fmt.Errorf("%w: %s", ErrEndpointRefused, r.refusal)
	case r.earlyStop != "":
		return rep, fmt.Errorf("%w: %s", ErrStoppedEarly, r.earlyStop)
	}
	return rep, nil
}

// MaxEventSize is the largest SSE event the client accepts, 256 KiB of the
// wire form (field names, data and line ends). Chat-completion chunks are a
// few hundred bytes; a larger event fails the request with
// stream_validation_failed instead of growing the read buffer. go-sse's own
// default (64 KiB) is not relied upon.
const MaxEventSize = client.MaxEventSize

// NewConnectionRule returns an http.RoundTripper that sends requests over
// base (http.DefaultTransport when nil) under the module's connection rule
// (capacity/PROTOCOL.md#connection-rule), for a client outside a run (a
// conformance check, a tool); base itself when it already follows the
// rule, so wrapping twice changes nothing.
func NewConnectionRule(base http.RoundTripper) http.RoundTripper {
	return client.NewConnectionRule(base)
}

// clientConfig is the configuration of the client of a run against t
// (resolved, its model known) with the resolved workload w, sending over
// hc with the credential key: its API's dialect, the contracts of w, no
// truncation window.
func clientConfig(t Target, w Workload, hc *http.Client, key string) client.Config {
	return client.Config{
		BaseURL: t.BaseURL, HTTPClient: hc, Header: t.Headers, APIKey: key, Secrets: t.secrets(key),
		Dialect: client.DialectOf(t.API),
		Timeout: w.Timeout, StallTimeout: w.StallTimeout,
		Checks: client.Checks{Canaries: w.RequestCanaries, Seed: w.Seed, Words: w.ResponseWords,
			Policy: string(w.ControlledOutputPolicy), MaxTokens: w.MaxTokens},
	}
}

// noRedirects makes the default client return a redirect as the answer:
// following it would add a round trip to the measured time of every
// request (and turn a POST into a GET on 301, 302 and 303), so a redirect
// fails the request and its message names the Location to put in
// Target.BaseURL instead.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// newTransport returns the transport Run uses when Target.HTTPClient is
// nil: a clone of http.DefaultTransport (proxy settings from the
// environment, HTTP/2, dial and TLS timeouts kept) whose keep-alive pool
// holds a connection per request in flight. The connection limit leaves as
// much slack again for connections being torn down, so a request never
// waits for a free connection inside its measured time. Its write buffer
// is connWriteBuffer unless http.DefaultTransport sets its own; its read
// buffer stays net/http's 4 KiB: every read of the connection goes through
// it (net/http reads a chunked body's size lines from it, which fill it),
// so it bounds how many bytes of a fast stream one read system call
// takes, and at 2 KiB the CPU per chunk of perfbench's fast streams rose.
func newTransport(concurrency int) *http.Transport {
	base, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		base = &http.Transport{}
	}
	tr := base.Clone()
	concurrency = max(concurrency, 1)
	tr.MaxIdleConnsPerHost = concurrency
	tr.MaxIdleConns = max(tr.MaxIdleConns, concurrency)
	tr.MaxConnsPerHost = 2 * concurrency
	if tr.WriteBufferSize == 0 {
		tr.WriteBufferSize = connWriteBuffer
	}
	return tr
}

// ownClient returns the HTTP client of a run's own transport tr
// (newTransport), and what closes its idle connections: an h1.Transport
// sends its plain http requests over HTTP/1.1 on the caller's goroutine,
// with no goroutine and no write buffer held per connection (package h1),
// dialing with tr's dialer; tr sends the rest (https, proxies) unchanged.
func ownClient(tr *http.Transport) (*http.Client, func()) {
	h := h1.New(tr)
	return &http.Client{Transport: h, CheckRedirect: noRedirects}, h.CloseIdleConnections
}

// connWriteBuffer is the size of the write buffer each connection of
// newTransport holds for its whole life (net/http's default: 4 KiB), a
// per-stream cost at thousands of streams (the h1 transport over it takes
// one of this size for each write only). It only gathers a request's
// head and the start of its body into one write: net/http hands the rest
// of a larger body to the connection past it (bufio.Writer.ReadFrom, once
// the buffer is empty), so its size changes no byte sent and costs no CPU
// per byte; 2 KiB holds the head (about 300 bytes) and a short prompt's
// body in one write.
const connWriteBuffer = 2 << 10

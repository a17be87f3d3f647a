package servermetrics

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// Bounds and defaults of a Config.
const (
	// defaultInterval is the time between samples when Config.Interval is 0.
	defaultInterval = time.Second
	// minInterval and maxInterval bound Config.Interval (and so
	// capacity.Target.MetricsInterval).
	minInterval = 10 * time.Millisecond
	maxInterval = time.Hour
	// maxBodyBytes bounds a /metrics body; a longer one is a failed sample.
	maxBodyBytes = 8 << 20
	// maxRunWait bounds a GET taken on the run's own goroutine (Discover's,
	// Prime's and Finish's, the sample at the phase's end), whatever the
	// interval and Timeout, and the default Timeout: a /metrics that stops
	// answering delays a run's start or end by at most this much, even at
	// an interval of an hour.
	maxRunWait = 2 * time.Second
)

// acceptHeader asks for the text format 0.0.4, which parse reads, rather
// than OpenMetrics, which prometheus_client serves when asked.
const acceptHeader = "text/plain;version=0.0.4;q=1.0,*/*;q=0.1"

// ErrNoEndpoint is wrapped by Discover's error when a URL the user set
// explicitly does not answer as a metrics endpoint.
var ErrNoEndpoint = errors.New("servermetrics: no metrics endpoint")

// Config configures a Sampler.
type Config struct {
	// URL is the endpoint, as EndpointURL returns it; "" or Off: none.
	URL string
	// Explicit says the user set URL: Discover then reports an endpoint
	// that does not answer, instead of being silently absent.
	Explicit bool
	// Interval is the time between samples, 10ms..1h (0:
	// 1s).
	Interval time.Duration
	// Timeout limits one sample's GET, body included: (0, Interval/2]
	// (0: Interval/4, at most 2s), so a slow endpoint never piles samples
	// up. The GETs on the run's goroutine wait at most 2s whatever it is.
	Timeout time.Duration
	// Client sends the GETs; nil means a client of the sampler's own (a
	// clone of http.DefaultTransport holding one connection, following no
	// redirect). Never the client that sends the measured requests: the
	// samples would take its connections.
	Client *http.Client
	// Header is sent with every GET (what a protected endpoint needs).
	Header http.Header
	// Series names further families to keep beside the curated ones, by
	// their exact names as the text format exposes them.
	Series []string
	// Scrub removes credentials from the endpoint, from every error
	// recorded and from the name and labels of every series kept (the
	// run's redactor), before anything is cut; nil for none.
	Scrub func(string) string
	// GPUs, for a DCGM exporter's endpoint, names the GPUs kept: an index
	// ("0": gpu="0"), a UUID ("GPU-..." or a MIG instance's "MIG-...":
	// UUID="..."), or a label pair ("Hostname=node-a"); nil keeps every
	// GPU. A sample of an engine's endpoint is kept whatever it is.
	GPUs []string
	// MaxSeries bounds the series kept, 1..160 (0: 64); beyond 64 each
	// series keeps fewer points (64 x 240 points in all).
	MaxSeries int

	own bool // Client is the sampler's own: Stop closes its connection
}

// Check returns the error Discover and Probe would report for c's
// Interval and Timeout (the URL is checked by EndpointURL), or nil: a
// *capacity.FieldError naming the field, its value and
// the allowed range.
func (c Config) Check() error {
	_, err := c.resolved()
	return err
}

// resolved returns c with defaults filled in, or a *field.Error naming
// the field.
func (c Config) resolved() (Config, error) {
	if c.Interval == 0 {
		c.Interval = defaultInterval
	}
	if c.Interval < minInterval || c.Interval > maxInterval {
		return c, configError("Config.Interval", c.Interval, fmt.Sprintf("must be in %v..%v (0: %v)", minInterval, maxInterval, defaultInterval), nil)
	}
	if c.Timeout == 0 {
		c.Timeout = min(c.Interval/4, maxRunWait)
	}
	if c.Timeout < 0 || c.Timeout > c.Interval/2 {
		return c, configError("Config.Timeout", c.Timeout, fmt.Sprintf("must be in (0, Interval/2 = %v] (0: Interval/4, at most %v)", c.Interval/2, maxRunWait), nil)
	}
	if c.Scrub == nil {
		c.Scrub = func(s string) string { return s }
	}
	if c.MaxSeries == 0 {
		c.MaxSeries = maxSeries
	}
	if c.MaxSeries < 1 || c.MaxSeries > maxMaxSeries {
		return c, configError("Config.MaxSeries", c.MaxSeries, fmt.Sprintf("must be in 1..%d (0: %d)", maxMaxSeries, maxSeries), nil)
	}
	if _, err := gpuPairs(c.GPUs); err != nil {
		return c, err
	}
	if c.Client == nil {
		c.own = true
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost, tr.MaxConnsPerHost = 1, 1
		c.Client = &http.Client{Transport: tr,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	return c, nil
}

// Sampler samples a server's metrics endpoint during a run's measured
// phase, on its own goroutine and connection: Discover it before the run,
// Start it when the phase starts, Finish it when the phase ends (the last
// sample) and Stop it for the artifact member.
type Sampler struct {
	cfg      Config
	endpoint string
	engine   engineName // as discovered; read by Engine, never written after
	seen     engineName // the first engine the samples showed (the loop's)

	primed bool // Prime's sample is the first point, at offset 0

	scan   *scanner   // reads every body, keeping the selected families
	st     *store     // the series, from Prime's sample on
	sink   sampleSink // st, behind the Labels and Only filter when set
	start  time.Time
	cancel context.CancelFunc
	done   chan struct{}
	ok     int
	failed int
	last   error
	// finished is set by Finish: sampling is over, the last sample taken.
	finished bool
	member   *artifact.ServerMetrics
	// gpus, for the Sampler DiscoverGPUs returns, samples the GPUs'
	// endpoints; Prime, Start, Finish and Stop are its.
	gpus *gpuSet
}

// Discover GETs the endpoint once, before the run. It returns nil and no
// error when there is nothing to sample: cfg.URL is "" or Off, or the
// server has no metrics endpoint (no answer, a status other than 200, a
// body that is not the text format) and the URL was not Explicit; with an
// Explicit URL that last case is an error wrapping ErrNoEndpoint. A bad
// Config is a *capacity.FieldError naming the field.
func Discover(ctx context.Context, cfg Config) (*Sampler, error) {
	if cfg.URL == "" || strings.EqualFold(cfg.URL, Off) {
		return nil, nil
	}
	if _, err := checkURL("URL", cfg.URL); err != nil {
		return nil, err
	}
	cfg, err := cfg.resolved()
	if err != nil {
		return nil, err
	}
	s := newSampler(cfg)
	wctx, cancel := runWait(ctx)
	defer cancel()
	sc, err := s.scrape(wctx, nil)
	if err != nil {
		if cfg.Explicit {
			return nil, fmt.Errorf("%w at %s: %s", ErrNoEndpoint, s.endpoint, cfg.Scrub(err.Error()))
		}
		return nil, nil
	}
	s.engine = sc.Engine
	if spec := specOf(s.engine); spec != nil && spec.labels != nil {
		// The exporter's series keep only its labels (a GPU's), and only
		// the GPUs named.
		s.sink = newSeriesFilter(s.st, spec.labels, s.only())
	}
	return s, nil
}

// newSampler returns a sampler of a resolved cfg.
func newSampler(cfg Config) *Sampler {
	st := newStore()
	st.scrub = cfg.Scrub
	st.setMax(cfg.MaxSeries)
	s := &Sampler{cfg: cfg, endpoint: recordedEndpoint(cfg.URL, cfg.Scrub),
		scan: newScanner(newSelection(cfg.Series)), st: st, sink: st}
	return s
}

// IntervalRange returns the bounds of Config.Interval (and so of
// capacity.Target.MetricsInterval): 10ms and 1h.
func (Config) IntervalRange() (lo, hi time.Duration) { return minInterval, maxInterval }

// only is the label pairs of the GPUs c names (checked by resolved).
func (s *Sampler) only() []string {
	pairs, _ := gpuPairs(s.cfg.GPUs)
	return pairs
}

// runWait returns ctx bounded by maxRunWait, for a GET on the run's
// goroutine.
func runWait(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, maxRunWait)
}

// Engine returns the engine whose names the endpoint had when discovered,
// or "".
func (s *Sampler) Engine() string { return string(s.engine) }

// Prime takes the sample the phase starts from, on the caller's
// goroutine, when nothing is in flight yet (after the warm-up, before the
// phase's clock starts): Start records it at offset 0 instead of sampling
// at once, so the counters' increases start exactly where the phase does,
// not where the sampling goroutine first ran (after the first requests
// may have produced tokens). A failed Prime is counted as a failed sample
// and Start samples at once as before. Call it at most once, before Start;
// on a nil Sampler it does nothing.
func (s *Sampler) Prime(ctx context.Context) {
	if s == nil {
		return
	}
	if s.gpus != nil {
		s.gpus.prime(ctx)
		return
	}
	ctx, cancel := runWait(ctx)
	defer cancel()
	s.primed = s.sampleAt(ctx, 0)
}

// Start starts sampling: a sample at once, then one every interval, until
// ctx is done or Stop. Offsets are measured from runStart, the run's
// monotonic start (the reading its offsets are taken from). Call it once.
//
// Its shape is capacity.Observer's, so a *Sampler is one of a run's
// observers (this package never imports capacity), and Run calls its
// Finish when the measured phase ends: the end hook it returns, called
// once the report is assembled, samples nothing more (Stop), computes the
// cross-checks from the report and sets rep.AnvilGo.ServerMetrics. A nil
// Sampler observes nothing.
func (s *Sampler) Start(ctx context.Context, runStart time.Time) func(rep *artifact.Report) {
	if s == nil {
		return nil
	}
	if s.gpus != nil {
		return s.gpus.start(ctx, runStart)
	}
	s.begin(ctx, runStart)
	return func(rep *artifact.Report) {
		m := s.Stop()
		m.Checks = check(m, factsOf(rep))
		m.SpecDecode = specDecodeOf(m, rep)
		rep.Extension().ServerMetrics = m
	}
}

// begin starts the sampling goroutine.
func (s *Sampler) begin(ctx context.Context, runStart time.Time) {
	s.start, s.done = runStart, make(chan struct{})
	ctx, s.cancel = context.WithCancel(ctx)
	go s.loop(ctx)
}

func (s *Sampler) loop(ctx context.Context) {
	defer close(s.done)
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	for first := true; ; first = false {
		if !first || !s.primed {
			s.sample(ctx)
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}

// sample takes one sample; a failure is counted, never returned.
func (s *Sampler) sample(ctx context.Context) {
	s.sampleAt(ctx, time.Since(s.start))
}

// sampleAt takes one sample recorded at offset at of the run's clock,
// and reports whether it answered.
func (s *Sampler) sampleAt(ctx context.Context, at time.Duration) bool {
	s.st.begin()
	sc, err := s.scrape(ctx, s.sink)
	if err != nil {
		s.st.rollback()
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return false // stopped while sampling: not a failure of the server
		}
		s.failed++
		s.last = err
		return false
	}
	s.ok++
	s.st.commit(float64(at) / float64(time.Millisecond))
	if s.seen == "" {
		s.seen = sc.Engine
	}
	return true
}

// scrape GETs the endpoint within the timeout, reading the body as it
// arrives: the kept samples go to sink (nil: none), every other line is
// read past. On an error sink may have had some of the body's samples.
func (s *Sampler) scrape(ctx context.Context, sink sampleSink) (scrapeResult, error) {
	var sc scrapeResult
	err := s.get(ctx, func(body io.Reader) (err error) {
		sc, err = s.scan.scan(body, sink)
		return err
	})
	return sc, err
}

// errBodyTooLarge is a body over maxBodyBytes.
var errBodyTooLarge = fmt.Errorf("body over %d bytes", maxBodyBytes)

// statusError is a GET answered with a status other than 200.
type statusError struct {
	endpoint string
	status   int
}

func (e *statusError) Error() string { return fmt.Sprintf("GET %s: status %d", e.endpoint, e.status) }

// get GETs the endpoint within the timeout and passes its body, at most
// maxBodyBytes, to read. An error reading the body (a timeout, a body
// over the bound) is the error, whatever read made of the part it got. A
// transport that panics (a caller's RoundTripper) is a failed sample,
// never a crash of the run.
func (s *Sampler) get(ctx context.Context, read func(io.Reader) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("GET %s: the transport panicked: %v", s.endpoint, p)
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.cfg.URL, nil)
	if err != nil {
		return fmt.Errorf("GET %s: %w", s.endpoint, err)
	}
	for k, vs := range s.cfg.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", acceptHeader)
	resp, err := s.cfg.Client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // it repeats the URL, userinfo included
		}
		return fmt.Errorf("GET %s: %w", s.endpoint, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // keep the connection
		return &statusError{s.endpoint, resp.StatusCode}
	}
	body := &bodyReader{r: resp.Body, left: maxBodyBytes}
	err = read(body)
	if body.err != nil {
		return fmt.Errorf("GET %s: reading the body: %w", s.endpoint, body.err)
	}
	if err != nil {
		return fmt.Errorf("GET %s: %w", s.endpoint, err)
	}
	return nil
}

// bodyReader reads a body of at most left bytes, remembering the first
// error of the body itself (errBodyTooLarge past the bound).
type bodyReader struct {
	r    io.Reader
	left int64
	err  error
}

func (b *bodyReader) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	switch {
	case b.left < 0:
		b.err = errBodyTooLarge
		return 0, b.err
	case err != nil && err != io.EOF:
		b.err = err
	}
	return n, err
}

// Finish ends the sampling when the measured phase ends and takes the
// last sample, recorded at the moment Finish was called (the phase's
// end): a capacity.Run calls it on its own goroutine, once every measured
// request has ended and before the report is assembled, so the last
// point is the phase's end and every counter's increase stops there,
// never covering the assembly or anything after. The sampling goroutine
// is stopped first (a GET it has in flight is cancelled, not counted),
// then the last GET runs on a context of its own within the timeout
// (Config.Timeout, at most half the interval), even when the run was
// cancelled, and at most 2s (maxRunWait) whatever the interval: a
// /metrics that stopped answering delays the run's end by no more. Later
// calls do nothing; before Start, or on a nil Sampler, it does nothing.
func (s *Sampler) Finish() {
	if s != nil && s.gpus != nil {
		s.gpus.finish()
		return
	}
	if s == nil || s.done == nil || s.finished {
		return
	}
	at := time.Since(s.start)
	s.finished = true
	s.cancel()
	<-s.done
	ctx, cancel := runWait(context.Background())
	defer cancel()
	s.sampleAt(ctx, at)
	if s.cfg.own {
		s.cfg.Client.CloseIdleConnections() // its connection outlives no run
	}
}

// Stop returns anvil_go.server_metrics (nil for the Sampler of GPUs
// DiscoverGPUs returns: its end hook sets their members), calling Finish first if nothing
// has (the last sample is then taken now). Later calls return the same
// member; before Start it returns nil.
func (s *Sampler) Stop() *artifact.ServerMetrics {
	if s == nil || s.done == nil || s.gpus != nil {
		return nil
	}
	if s.member != nil {
		return s.member
	}
	s.Finish()
	m := &artifact.ServerMetrics{
		Endpoint:           s.endpoint,
		IntervalMS:         float64(s.cfg.Interval) / float64(time.Millisecond),
		TimeoutMS:          float64(s.cfg.Timeout) / float64(time.Millisecond),
		Samples:            s.ok,
		Failed:             s.failed,
		MaxPointsPerSeries: s.st.maxPoints(),
		DroppedSeries:      len(s.st.dropped),
		SkippedValues:      s.st.skipped,
		Series:             s.st.members(),
	}
	if e := cmp.Or(s.engine, s.seen); e != "" {
		m.Engine = new(string(e))
	}
	if s.last != nil {
		m.LastError = new(cutText(s.cfg.Scrub(s.last.Error()), maxErrorBytes))
	}
	s.member = m
	return m
}

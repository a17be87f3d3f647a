package servermetrics

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// handlerClient is an http.Client that serves every request with h in the
// calling goroutine, so a sampler runs on a testing/synctest bubble's clock
// against a plain handler.
func handlerClient(h http.Handler) *http.Client {
	return &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if err := r.Context().Err(); err != nil {
			return nil, err
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if err := r.Context().Err(); err != nil {
			return nil, err
		}
		return rec.Result(), nil
	})}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// counterServer serves a vLLM-named body whose counter rises by 10 and
// whose gauge is the call number, each call.
type counterServer struct {
	mu     sync.Mutex
	calls  int
	fail   func(call int) int // status to answer instead, 0 for none
	accept []string
}

func (c *counterServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	n := c.calls
	c.calls++
	c.accept = append(c.accept, r.Header.Get("Accept"))
	c.mu.Unlock()
	if c.fail != nil {
		if st := c.fail(n); st != 0 {
			http.Error(w, "no", st)
			return
		}
	}
	fmt.Fprintf(w, "# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total{engine=\"0\"} %d\n"+
		"# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=\"0\"} %d\n", 100+10*n, n)
}

// TestSamplerClock: samples at Start, every interval on the run's clock,
// and at Stop; offsets exact; the counter's increase covers them all; the
// discovery GET is not a sample.
func TestSamplerClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &counterServer{}
		cfg := Config{URL: "http://gpu-box:8000/metrics", Client: handlerClient(srv)}
		s, err := Discover(t.Context(), cfg)
		require.NoError(t, err)
		require.NotNil(t, s)
		require.Equal(t, string(engineVLLM), s.Engine())
		time.Sleep(5 * time.Second) // warm-up: not sampled
		runStart := time.Now()
		s.Start(t.Context(), runStart)
		time.Sleep(3500 * time.Millisecond)
		m := s.Stop()
		require.Same(t, m, s.Stop(), "Stop is idempotent")
		labels := map[string]string{"engine": "0"}
		want := &artifact.ServerMetrics{
			Endpoint: "http://gpu-box:8000/metrics", Engine: new("vllm"), IntervalMS: 1000, TimeoutMS: 250,
			Samples: 5, MaxPointsPerSeries: maxPointsPerSeries,
			Series: []artifact.MetricSeries{
				{Name: "vllm:generation_tokens_total", Type: typeCounter, Labels: labels, SamplesPerPoint: 1,
					OffsetsMS: []float64{0, 1000, 2000, 3000, 3500}, Values: []float64{110, 120, 130, 140, 150},
					Increase: new(40.0), Resets: new(0)},
				{Name: "vllm:num_requests_running", Type: typeGauge, Labels: labels, SamplesPerPoint: 1,
					OffsetsMS: []float64{0, 1000, 2000, 3000, 3500}, Values: []float64{1, 2, 3, 4, 5}},
			},
		}
		require.Empty(t, cmp.Diff(want, m, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".shape" }, cmp.Ignore())))
		for _, a := range srv.accept {
			require.Equal(t, acceptHeader, a)
		}
	})
}

// TestSamplerFailuresCounted: failed samples are counted with the last
// error, never stop the sampler, and a sample that outlives its timeout
// fails within the timeout, so samples never pile up.
func TestSamplerFailuresCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var hang sync.WaitGroup
		var hangNext atomic.Bool
		srv := &counterServer{fail: func(call int) int {
			if call == 2 || call == 3 {
				return http.StatusServiceUnavailable
			}
			return 0
		}}
		slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if hangNext.Load() {
				hang.Add(1)
				defer hang.Done()
				<-r.Context().Done()
				return
			}
			srv.ServeHTTP(w, r)
		})
		s, err := Discover(t.Context(), Config{URL: "http://gpu-box:8000/metrics", Client: handlerClient(slow)})
		require.NoError(t, err)
		start := time.Now()
		s.Start(t.Context(), start)
		time.Sleep(4500 * time.Millisecond) // samples 1..5 (the discovery was call 0)
		hangNext.Store(true)
		m := s.Stop() // the last sample hangs: cut at the timeout
		require.Equal(t, 250*time.Millisecond, time.Since(start)-4500*time.Millisecond, "the last sample waited exactly its timeout")
		hang.Wait()
		require.Equal(t, 3, m.Samples)
		require.Equal(t, 3, m.Failed)
		require.NotNil(t, m.LastError)
		require.Contains(t, *m.LastError, "context deadline exceeded")
		require.Equal(t, []float64{0, 3000, 4000}, m.Series[0].OffsetsMS)
		require.Equal(t, []float64{110, 140, 150}, m.Series[0].Values)
		require.Equal(t, 40.0, *m.Series[0].Increase, "the counter rose from 110 to 150 over the samples that answered")
	})
}

// TestDiscover: absent silently by default when the server has none; an
// explicit URL that does not answer is an error; off is nothing.
func TestDiscover(t *testing.T) {
	notFound := handlerClient(http.NotFoundHandler())
	html := handlerClient(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "<html><body>dashboard</body></html>")
	}))
	down := &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
		return nil, errors.New("connection refused")
	})}
	for name, hc := range map[string]*http.Client{"404": notFound, "html": html, "down": down} {
		s, err := Discover(t.Context(), Config{URL: "http://h/metrics", Client: hc})
		require.NoError(t, err, name)
		require.Nil(t, s, name)
		s, err = Discover(t.Context(), Config{URL: "http://h/metrics", Client: hc, Explicit: true})
		require.ErrorIs(t, err, ErrNoEndpoint, name)
		require.Nil(t, s, name)
		require.ErrorContains(t, err, "http://h/metrics", name)
	}
	for _, u := range []string{"", Off, "OFF"} {
		s, err := Discover(t.Context(), Config{URL: u, Explicit: true})
		require.NoError(t, err)
		require.Nil(t, s)
	}
	var nilSampler *Sampler
	require.Nil(t, nilSampler.Stop(), "a sampler never discovered has no member")
}

// TestDiscoverScrubs: the endpoint is recorded without userinfo or query
// and through the run's scrubber, in the member and in every error.
func TestDiscoverScrubs(t *testing.T) {
	scrub := func(s string) string { return strings.ReplaceAll(s, "sekret", "[redacted]") }
	hc := handlerClient(&counterServer{})
	s, err := Discover(t.Context(), Config{URL: "http://user:pw@sekret.example/metrics?token=abc", Client: hc, Scrub: scrub})
	require.NoError(t, err)
	require.Equal(t, "http://[redacted].example/metrics", s.endpoint)

	down := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return nil, fmt.Errorf("dial %s: refused", r.URL.Host)
	})}
	_, err = Discover(t.Context(), Config{URL: "http://user:pw@sekret.example/metrics", Client: down, Scrub: scrub, Explicit: true})
	require.Error(t, err)
	require.NotContains(t, err.Error(), "sekret")
	require.NotContains(t, err.Error(), "pw")
}

// TestConfigBounds: a bad interval or timeout is refused naming the field
// and the range.
func TestConfigBounds(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Interval: time.Millisecond}, "servermetrics: Config.Interval = 1ms: must be in 10ms..1h0m0s (0: 1s)"},
		{Config{Interval: 2 * time.Hour}, "servermetrics: Config.Interval = 2h0m0s: must be in 10ms..1h0m0s (0: 1s)"},
		{Config{Interval: time.Second, Timeout: 600 * time.Millisecond}, "servermetrics: Config.Timeout = 600ms: must be in (0, Interval/2 = 500ms] (0: Interval/4, at most 2s)"},
		{Config{Timeout: -time.Second}, "servermetrics: Config.Timeout = -1s: must be in (0, Interval/2 = 500ms] (0: Interval/4, at most 2s)"},
	} {
		tc.cfg.URL = "http://h/metrics"
		_, err := Discover(context.Background(), tc.cfg)
		require.ErrorIs(t, err, errInvalidConfig)
		require.EqualError(t, err, tc.want)
		require.Equal(t, err, tc.cfg.Check(), "Check reports what Discover does")
	}
	require.NoError(t, Config{}.Check(), "the defaults")
	_, err := Discover(context.Background(), Config{URL: "ftp://h/metrics"})
	require.ErrorIs(t, err, errInvalidConfig)
}

// TestEndpointURL: the default is /metrics at the server's root; an
// override wins; off disables.
func TestEndpointURL(t *testing.T) {
	for _, tc := range []struct{ base, override, want string }{
		{"http://gpu-box:8000/v1", "", "http://gpu-box:8000/metrics"},
		{"http://gpu-box:8000/v1/", "", "http://gpu-box:8000/metrics"},
		{"https://h/proxy/v1", "", "https://h/proxy/metrics"},
		{"http://h:8080", "", "http://h:8080/metrics"},
		{"http://h/v1", "http://h:9090/prom", "http://h:9090/prom"},
		{"http://h/v1", "off", ""},
		{"http://h/v1", "OFF", ""},
	} {
		got, err := EndpointURL(tc.base, tc.override)
		require.NoError(t, err, tc)
		require.Equal(t, tc.want, got, tc)
	}
	_, err := EndpointURL("http://h/v1", "gpu-box:9090")
	require.ErrorIs(t, err, errInvalidConfig)
	_, err = EndpointURL("::", "")
	require.ErrorIs(t, err, errInvalidConfig)
}

// TestOwnClient: without Config.Client the sampler has a client of its
// own: its own transport (never http.DefaultTransport, which measured
// requests may share), one connection, no redirect followed; Header is
// sent with every GET.
func TestOwnClient(t *testing.T) {
	cfg, err := Config{URL: "http://h/metrics"}.resolved()
	require.NoError(t, err)
	tr, ok := cfg.Client.Transport.(*http.Transport)
	require.True(t, ok)
	require.NotSame(t, http.DefaultTransport, tr)
	require.Equal(t, 1, tr.MaxConnsPerHost)
	require.Equal(t, 1, tr.MaxIdleConnsPerHost)

	var got []string
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("X-Token"))
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	})
	mux.HandleFunc("/elsewhere", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "# TYPE tgi_queue_size gauge\ntgi_queue_size 1\n")
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	s, err := Discover(t.Context(), Config{URL: srv.URL + "/metrics", Header: http.Header{"X-Token": {"t1"}}, Explicit: true})
	require.ErrorIs(t, err, ErrNoEndpoint, "a redirect is not followed")
	require.ErrorContains(t, err, "status 302")
	require.Nil(t, s)
	require.Equal(t, []string{"t1"}, got)
}

// TestSamplerPrime: a primed sampler's first point is Prime's sample, at
// offset 0, taken before the phase's clock started; Start does not sample
// again at once, so a counter that rose between Prime and the sampling
// goroutine's first run (the first requests' tokens) is in the increase.
func TestSamplerPrime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &counterServer{}
		s, err := Discover(t.Context(), Config{URL: "http://gpu-box:8000/metrics", Client: handlerClient(srv)})
		require.NoError(t, err)
		time.Sleep(5 * time.Second) // warm-up
		s.Prime(t.Context())        // call 1: counter 110
		start := time.Now()
		s.Start(t.Context(), start)
		time.Sleep(1500 * time.Millisecond) // call 2 at 1000 ms
		m := s.Stop()                       // call 3 at 1500 ms
		require.Equal(t, 3, m.Samples)
		c := m.Series[0]
		require.Equal(t, "vllm:generation_tokens_total", c.Name)
		require.Equal(t, []float64{0, 1000, 1500}, c.OffsetsMS)
		require.Equal(t, []float64{110, 120, 130}, c.Values)
		require.Equal(t, 20.0, *c.Increase)
	})
}

// TestLabelsScrubbed: a server whose labels carry the run's key (a model
// named after it, raw, upper-cased, hex, in a value long enough to be cut
// across it) has the labels kept scrubbed, before the cut.
func TestLabelsScrubbed(t *testing.T) {
	const key = "sk-LABELKEY-42ab"
	scrub := func(s string) string {
		for _, form := range []string{key, strings.ToUpper(key), fmt.Sprintf("%x", key)} {
			s = strings.ReplaceAll(s, form, "[redacted]")
		}
		return s
	}
	long := strings.Repeat("m", maxLabelValueBytes-8) + key
	body := fmt.Sprintf("# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=%q,hex=\"%x\",up=%q,long=%q} 1\n",
		key, key, strings.ToUpper(key), long)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, body) }))
	defer srv.Close()
	s, err := Discover(t.Context(), Config{URL: srv.URL + "/metrics", Scrub: scrub})
	require.NoError(t, err)
	s.Prime(t.Context())
	s.Start(t.Context(), time.Now())
	m := s.Stop()
	require.Len(t, m.Series, 1)
	l := m.Series[0].Labels
	require.Equal(t, "[redacted]", l["model_name"])
	require.Equal(t, "[redacted]", l["hex"])
	require.Equal(t, "[redacted]", l["up"])
	require.Equal(t, cutLabel(strings.Repeat("m", maxLabelValueBytes-8)+"[redacted]"), l["long"], "scrubbed, then cut")
	require.NotContains(t, l["long"], "sk-")
}

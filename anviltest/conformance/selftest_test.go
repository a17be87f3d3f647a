package conformance

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// The embedded fake's settings anviltest.Conformance runs against (its
// default profile and time scale).
const (
	fakeProfile   = "reasoning"
	fakeTimeScale = 0.05
)

// suiteAt runs every check against the target of c (each request within
// 30 s unless c says otherwise) and returns the verdicts by check.
func suiteAt(t *testing.T, c Config) map[string]Verdict {
	t.Helper()
	if c.Timeout == 0 {
		c.Timeout = 30 * time.Second
	}
	s, err := New(t.Context(), c)
	require.NoError(t, err)
	got := map[string]Verdict{}
	for _, n := range Checks() {
		got[n] = s.Check(t.Context(), n)
	}
	return got
}

// suiteAgainstFake runs the suite against an in-memory fake server of cfg;
// wrap, when set, wraps the transport between the suite and the fake.
func suiteAgainstFake(t *testing.T, cfg fakeserver.Config, wrap func(http.RoundTripper) http.RoundTripper, required ...string) map[string]Verdict {
	t.Helper()
	srv := fakeserver.NewInMemory(cfg)
	t.Cleanup(srv.Close)
	hc := srv.Client()
	if wrap != nil {
		hc = &http.Client{Transport: wrap(hc.Transport)}
	}
	return suiteAt(t, Config{Target: capacity.Target{BaseURL: srv.BaseURL(), Model: cfg.Model, HTTPClient: hc}, Required: required})
}

// outcomes lists the checks of each outcome, in suite order.
func outcomes(vs map[string]Verdict, o Outcome) []string {
	var names []string
	for _, n := range Checks() {
		if vs[n].Outcome == o {
			names = append(names, n)
		}
	}
	return names
}

// checkVerdicts logs every verdict of got and fails with a diff when
// their outcomes are not want's.
func checkVerdicts(t *testing.T, got map[string]Verdict, want map[string]Outcome) {
	t.Helper()
	for _, n := range Checks() {
		t.Logf("%s: %s: %s %q", n, got[n].Outcome, got[n].Reason, got[n].Notes)
	}
	gotOutcomes := map[string]Outcome{}
	for n, v := range got {
		gotOutcomes[n] = v.Outcome
	}
	if diff := cmp.Diff(want, gotOutcomes); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
}

// modelsListing answers GET /v1/models with a list that names only
// another model, as a gateway that renames models does; every other
// request goes to next.
type modelsListing struct{ next http.RoundTripper }

func (m modelsListing) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/models") {
		return m.next.RoundTrip(r)
	}
	body := `{"object":"list","data":[{"id":"some-other-model","object":"model","max_model_len":32768}]}`
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)), Request: r}, nil
}

// metricsPage answers GET /metrics with an HTML page, as a dashboard
// behind the same path would: a metrics endpoint no scraper can read.
type metricsPage struct{ next http.RoundTripper }

func (m metricsPage) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodGet || r.URL.Path != "/metrics" {
		return m.next.RoundTrip(r)
	}
	body := `<html><body>dashboard</body></html>`
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"text/html"}}, Body: io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)), Request: r}, nil
}

// knob is one fault or dialect knob of the fake server and the verdicts
// the suite must give under it.
type knob struct {
	name     string
	config   func(*fakeserver.Config)
	wrap     func(http.RoundTripper) http.RoundTripper
	required []string
	wantFail []string
	wantSkip []string
}

func always(f fakeserver.Fault) func(*fakeserver.Config) {
	return func(c *fakeserver.Config) { c.Faults.Probability = map[fakeserver.Fault]float64{f: 1} }
}

// knobs is the self-test table: each knob must fail exactly its checks and
// skip exactly its skips; everything else passes. A knob that breaks every
// stream the capacity client reads (wrong Content-Type, unrequested gzip,
// malformed JSON) also skips nameIsolation: the capacity run rejects each
// response before its canary is checked, so isolation is not proven.
func knobs() []knob {
	ollama, err := fakeserver.DialectByName("ollama")
	if err != nil {
		panic(err)
	}
	return []knob{
		{name: "fast profile", config: func(*fakeserver.Config) {}},
		{name: "GET /models lists another model", wrap: func(rt http.RoundTripper) http.RoundTripper { return modelsListing{rt} },
			wantFail: []string{nameModels}},
		{name: "GET /metrics answers HTML", wrap: func(rt http.RoundTripper) http.RoundTripper { return metricsPage{rt} },
			wantFail: []string{nameMetrics}},
		{name: "Dialect.OmitModelLen", config: func(c *fakeserver.Config) { c.Dialect.OmitModelLen = true },
			wantSkip: []string{nameModels}},
		{name: "Dialect.OmitModelLen, models required", config: func(c *fakeserver.Config) { c.Dialect.OmitModelLen = true },
			required: []string{nameModels}, wantFail: []string{nameModels}},
		{name: "fault wrong_content_type", config: always("wrong_content_type"),
			wantFail: []string{nameStreamFraming}, wantSkip: []string{nameIsolation}},
		{name: "Dialect.OmitDone", config: func(c *fakeserver.Config) { c.Dialect.OmitDone = true },
			wantFail: []string{nameStreamFraming}},
		// capacity decodes the unasked-for gzip, so isolation still runs.
		{name: "Dialect.Gzip always", config: func(c *fakeserver.Config) { c.Dialect.Gzip = "always" },
			wantFail: []string{nameStreamFraming}},
		{name: "fault malformed_json", config: always("malformed_json"),
			wantFail: []string{nameStreamFraming}, wantSkip: []string{nameIsolation}},
		{name: "Dialect.Usage omitted", config: func(c *fakeserver.Config) { c.Dialect.Usage = "none" },
			wantFail: []string{nameUsage}, wantSkip: []string{namePrefixCache}},
		{name: "Dialect.Usage in the last choice", config: func(c *fakeserver.Config) { c.Dialect.Usage = "last-choice" }},
		{name: "fault usage_total_mismatch", config: always("usage_total_mismatch"),
			wantFail: []string{nameUsage}},
		// capacity refuses completion tokens beyond max_tokens, so no
		// isolation request succeeds.
		{name: "fault ignore_max_tokens", config: always("ignore_max_tokens"),
			wantFail: []string{nameMaxTokens}, wantSkip: []string{nameIsolation}},
		{name: "Dialect.OmitFinishReason", config: func(c *fakeserver.Config) { c.Dialect.OmitFinishReason = true },
			wantFail: []string{nameFinishReason}},
		{name: "fault reasoning_only", config: always("reasoning_only"),
			wantFail: []string{nameContent}, wantSkip: []string{nameIsolation}},
		{name: "Dialect.ThinkTags", config: func(c *fakeserver.Config) { c.Dialect.ThinkTags = true },
			wantFail: []string{nameReasoningSeparation}, wantSkip: []string{nameIsolation}},
		{name: "plain profile (no reasoning)", config: func(c *fakeserver.Config) { c.ReasoningTokens = fakeserver.Range{} },
			wantSkip: []string{nameReasoningSeparation}},
		{name: "Dialect.TruncatePrompt", config: func(c *fakeserver.Config) { c.Dialect.TruncatePrompt = true },
			wantFail: []string{namePromptTokens}},
		{name: "Dialect.TokenizeSkew", config: func(c *fakeserver.Config) { c.Dialect.TokenizeSkew = 3 },
			wantFail: []string{namePromptTokens}},
		{name: "Dialect.OmitTokenize", config: func(c *fakeserver.Config) { c.Dialect.OmitTokenize = true }},
		{name: "Dialect.OmitCachedTokens", config: func(c *fakeserver.Config) { c.Dialect.OmitCachedTokens = true },
			wantSkip: []string{namePrefixCache}},
		{name: "no prefix cache", config: func(c *fakeserver.Config) { c.CacheTokens = 0 },
			wantFail: []string{namePrefixCache}},
		{name: "Dialect.HTMLErrors", config: func(c *fakeserver.Config) { c.Dialect.HTMLErrors = true },
			wantFail: []string{nameBadRequest}},
		{name: "fault foreign_marker", config: always("foreign_marker"),
			wantFail: []string{nameIsolation}},
		{name: "fault omit_marker", config: always("omit_marker"),
			wantSkip: []string{nameIsolation}},
		{name: "Config.Nondeterministic", config: func(c *fakeserver.Config) { c.Nondeterministic = true },
			wantSkip: []string{nameDeterminism}},
		{name: "Config.Nondeterministic, determinism required", config: func(c *fakeserver.Config) { c.Nondeterministic = true },
			required: []string{nameDeterminism}, wantFail: []string{nameDeterminism}},
		{name: "ollama dialect", config: func(c *fakeserver.Config) { c.Dialect = ollama },
			wantSkip: []string{namePrefixCache}},
	}
}

// TestConformanceProvesItself runs the suite against the fake once per
// knob and asserts exactly the failures and skips the knob must cause.
func TestConformanceProvesItself(t *testing.T) {
	failed := map[string]bool{}
	for _, k := range knobs() {
		for _, n := range k.wantFail {
			failed[n] = true
		}
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			cfg := fakeserver.Fast()
			cfg.TimeScale = fakeTimeScale
			if k.config != nil {
				k.config(&cfg)
			}
			got := suiteAgainstFake(t, cfg, k.wrap, k.required...)
			for _, n := range Checks() {
				t.Logf("%s: %s: %s", n, got[n].Outcome, got[n].Reason)
			}
			if diff := cmp.Diff(k.wantFail, outcomes(got, Fail)); diff != "" {
				t.Errorf("failed checks (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(k.wantSkip, outcomes(got, Skip)); diff != "" {
				t.Errorf("skipped checks (-want +got):\n%s", diff)
			}
		})
	}
	for _, n := range Checks() {
		if !failed[n] {
			t.Errorf("no knob fails the check %s: a check nothing can fail proves nothing", n)
		}
	}
}

// TestConformanceDefaultProfile: against the embedded fake's default
// profile, at the time scale TestConformance uses, every check passes.
func TestConformanceDefaultProfile(t *testing.T) {
	cfg, err := fakeserver.Profile(fakeProfile)
	require.NoError(t, err)
	cfg.TimeScale = fakeTimeScale
	got := suiteAgainstFake(t, cfg, nil)
	require.Len(t, got, len(Checks()))
	for _, n := range Checks() {
		if got[n].Outcome != Pass {
			t.Errorf("%s: %s: %s %q", n, got[n].Outcome, got[n].Reason, got[n].Notes)
		}
	}
	require.True(t, slices.Equal(outcomes(got, Pass), Checks()))
}

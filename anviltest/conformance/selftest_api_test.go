package conformance

import (
	"bytes"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/anvilbench/anvil/capacity"
	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// apiSkips are the checks an API never judges, because it has nothing
// for them to read: completions has no reasoning channel; an embeddings
// answer has no token limit, stop reason, reasoning, cached tokens or
// text to carry a canary.
var apiSkips = map[string][]string{
	apiCompletions: {nameReasoningSeparation},
	apiEmbeddings:  {nameMaxTokens, nameFinishReason, nameReasoningSeparation, namePrefixCache, nameIsolation},
}

// apiKnob changes what a knob of knobs() must cause over one API: the
// knob named name fails fail and skips skip there instead.
type apiKnob struct {
	name       string
	fail, skip []string
}

// apiKnobs are the knobs whose verdicts differ over an API from chat's,
// each for what that API's framing makes of the fake's knob:
//   - Responses without its terminal event has neither usage nor status;
//     Ollama's Responses are always "completed" (a cut answer too) and
//     report 0 cached tokens;
//   - Messages has no total to mismatch; Ollama's message_start reports
//     an estimate of the input tokens that message_delta then corrects;
//   - completions has no reasoning channel: <think> tags and a reasoning-
//     only answer are the model's text;
//   - embeddings read none of the stream knobs; their vector faults and a
//     nondeterministic fake fail or skip their own checks.
var apiKnobs = map[string][]apiKnob{
	apiResponses: {
		{name: "Dialect.OmitDone", fail: []string{nameStreamFraming, nameUsage, nameFinishReason}, skip: []string{namePrefixCache}},
		{name: "ollama dialect", fail: []string{nameMaxTokens, namePrefixCache}},
	},
	apiMessages: {
		{name: "fault usage_total_mismatch"},
		{name: "ollama dialect", fail: []string{nameUsage}, skip: []string{namePrefixCache}},
	},
	apiCompletions: {
		{name: "Dialect.ThinkTags"},
		{name: "fault reasoning_only", skip: []string{nameIsolation}},
	},
	apiEmbeddings: {
		{name: "Dialect.OmitDone"}, {name: "Dialect.Gzip always"}, {name: "fault malformed_json"},
		{name: "Dialect.Usage omitted"}, {name: "fault ignore_max_tokens"}, {name: "Dialect.OmitFinishReason"},
		{name: "fault reasoning_only"}, {name: "Dialect.ThinkTags"}, {name: "Dialect.OmitCachedTokens"},
		{name: "no prefix cache"}, {name: "fault foreign_marker"}, {name: "fault omit_marker"},
		{name: "ollama dialect"},
	},
}

// extraKnobs are knobs of one API alone.
var extraKnobs = map[string][]knob{
	apiCompletions: {
		{name: "every text empty", wrap: func(rt http.RoundTripper) http.RoundTripper { return blankText{rt} },
			wantFail: []string{nameContent}, wantSkip: []string{nameIsolation, nameDeterminism}},
	},
	apiEmbeddings: {
		{name: "fault vector_count", config: always("vector_count"), wantFail: []string{nameContent}, wantSkip: []string{nameDeterminism}},
		{name: "fault vector_nan", config: always("vector_nan"), wantFail: []string{nameContent}, wantSkip: []string{nameDeterminism}},
		{name: "fault vector_dimension", config: always("vector_dimension"), wantFail: []string{nameContent}},
	},
}

// knobsFor is the self-test table over api: knobs() with the verdicts
// apiKnobs gives, then extraKnobs, each knob's skips with the API's.
func knobsFor(api string) []knob {
	edits := map[string]apiKnob{}
	for _, e := range apiKnobs[api] {
		edits[e.name] = e
	}
	var out []knob
	for _, k := range append(knobs(), extraKnobs[api]...) {
		if e, ok := edits[k.name]; ok {
			k.wantFail, k.wantSkip = e.fail, e.skip
		}
		k.wantFail = inSuiteOrder(k.wantFail, nil)
		k.wantSkip = inSuiteOrder(k.wantSkip, apiSkips[api])
		out = append(out, k)
	}
	return out
}

// inSuiteOrder is the checks of a and b, in suite order; nil when none.
func inSuiteOrder(a, b []string) []string {
	var out []string
	for _, n := range Checks() {
		if slices.Contains(a, n) || slices.Contains(b, n) {
			out = append(out, n)
		}
	}
	return out
}

// blankText empties every "text" of a completions stream, as a server
// whose answers carry no visible text would send them.
type blankText struct{ next http.RoundTripper }

var textField = regexp.MustCompile(`"text":"(?:[^"\\]|\\.)*"`)

func (b blankText) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := b.next.RoundTrip(r)
	if err != nil || !strings.HasSuffix(r.URL.Path, "/completions") || strings.HasSuffix(r.URL.Path, "/chat/completions") {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	body = textField.ReplaceAll(body, []byte(`"text":""`))
	resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(body)), -1
	resp.Header.Del("Content-Length")
	return resp, nil
}

// TestConformanceProvesItselfPerAPI runs the suite over each API but
// chat (TestConformanceProvesItself's) against the fake once per knob,
// and asserts exactly the failures and skips the knob must cause; every
// check an API judges is failed by some knob.
func TestConformanceProvesItselfPerAPI(t *testing.T) {
	skipUnderRace(t, "a suite run per knob and API: the checks' verdict logic; TestConformanceProvesItself and TestConformanceDefaultProfilePerAPI race the suite")
	for _, api := range []string{apiResponses, apiMessages, apiCompletions, apiEmbeddings} {
		t.Run(api, func(t *testing.T) {
			t.Parallel()
			failed := map[string]bool{}
			for _, k := range knobsFor(api) {
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
					srv := fakeserver.NewInMemory(cfg)
					t.Cleanup(srv.Close)
					hc := srv.Client()
					if k.wrap != nil {
						hc = &http.Client{Transport: k.wrap(hc.Transport)}
					}
					got := suiteAt(t, Config{Target: capacity.Target{BaseURL: srv.BaseURL(), Model: cfg.Model, HTTPClient: hc, API: api}, Required: k.required})
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
				if !failed[n] && !slices.Contains(apiSkips[api], n) {
					t.Errorf("no knob fails the check %s over %s: a check nothing can fail proves nothing", n, api)
				}
			}
		})
	}
}

// TestConformanceDefaultProfilePerAPI: over each API, against the
// embedded fake's default profile, every check the API judges passes.
func TestConformanceDefaultProfilePerAPI(t *testing.T) {
	for _, api := range []string{apiResponses, apiMessages, apiCompletions, apiEmbeddings} {
		t.Run(api, func(t *testing.T) {
			t.Parallel()
			cfg, err := fakeserver.Profile(fakeProfile)
			if err != nil {
				t.Fatal(err)
			}
			cfg.TimeScale = fakeTimeScale
			srv := fakeserver.NewInMemory(cfg)
			t.Cleanup(srv.Close)
			got := suiteAt(t, Config{Target: capacity.Target{BaseURL: srv.BaseURL(), Model: cfg.Model, HTTPClient: srv.Client(), API: api}})
			want := map[string]Outcome{}
			for _, n := range Checks() {
				want[n] = Pass
				if slices.Contains(apiSkips[api], n) {
					want[n] = Skip
				}
			}
			checkVerdicts(t, got, want)
		})
	}
}

package anviltest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anvilbench/anvil/capacity"
)

// The conformance checks, in the order Conformance runs them. Each name is
// the name of its subtest (go test -run Conformance/usage runs one) and of
// its row in the verdict files.
const (
	// CheckModels: GET /models answers a model list that names the model
	// used; SKIP when no entry field advertises its context length
	// (max_model_len, max_context_length, context_length).
	CheckModels = "models"
	// CheckStreamFraming: a streamed chat completion answers 200 with
	// Content-Type text/event-stream, uncompressed when the request asked
	// for identity, carries its chunks as JSON "data:" events with no error
	// object, and ends with the terminal "data: [DONE]" and nothing after.
	CheckStreamFraming = "stream_framing"
	// CheckUsage: with stream_options.include_usage a usage object arrives
	// with prompt_tokens, completion_tokens and total_tokens equal to their
	// sum.
	CheckUsage = "usage"
	// CheckMaxTokens: an answer asked to be long is cut at max_tokens (and
	// at max_completion_tokens): at most that many completion tokens
	// (usage, else the output chunks as a lower bound) and finish_reason
	// "length".
	CheckMaxTokens = "max_tokens"
	// CheckFinishReason: the last chunk with choices carries a finish_reason
	// of the OpenAI set (stop, length, tool_calls, content_filter,
	// function_call).
	CheckFinishReason = "finish_reason"
	// CheckContent: a short question gets visible content in
	// delta.content; SKIP when the token budget ended inside the reasoning.
	CheckContent = "content"
	// CheckReasoningSeparation: reasoning arrives in reasoning_content or
	// reasoning, never as <think> text inside content; SKIP for a model that
	// does not reason.
	CheckReasoningSeparation = "reasoning_separation"
	// CheckPromptTokens: usage.prompt_tokens agrees with POST /tokenize
	// when the server has it, and a prompt longer than the advertised
	// context window is refused with an error, not silently truncated; SKIP
	// when neither can be tried.
	CheckPromptTokens = "prompt_tokens"
	// CheckPrefixCache: a repeated long prefix reports cached tokens in
	// usage.prompt_tokens_details.cached_tokens; SKIP when the server never
	// reports them.
	CheckPrefixCache = "prefix_cache"
	// CheckBadRequest: invalid JSON, an unknown model and a malformed
	// messages field each get a 4xx with an OpenAI-style {"error": {...}}
	// JSON body within ConformanceErrorDeadline, never a stream or a 5xx.
	CheckBadRequest = "bad_request"
	// CheckIsolation: concurrent requests asked to begin with their own
	// canary marker never see another request's marker (a capacity run with
	// Workload.RequestCanaries); SKIP when the model does not echo its
	// marker, which proves nothing either way.
	CheckIsolation = "isolation"
	// CheckDeterminism: the same request at temperature 0 twice gives the
	// same output; SKIP with the first difference when it does not
	// (informative: many engines are not deterministic across batches).
	CheckDeterminism = "determinism"
)

// ConformanceChecks lists the check names in the order Conformance runs
// them.
func ConformanceChecks() []string {
	names := make([]string, 0, len(checkTable()))
	for _, c := range checkTable() {
		names = append(names, c.name)
	}
	return names
}

// An Outcome is a check's verdict.
type Outcome string

// The outcomes.
const (
	// Pass: the server did what OpenAI-compatible streaming clients rely on.
	Pass Outcome = "pass"
	// Fail: a violation (the reason names it).
	Fail Outcome = "fail"
	// Skip: the server does not offer an optional feature the check needs,
	// or the answer gave nothing to judge (the reason says which).
	Skip Outcome = "skip"
)

// Verdict is the result of one check: its outcome, a one-line reason and
// what the check saw. Text that came from the server is escaped (control
// characters, invalid UTF-8, bidirectional overrides) and cut short, so it
// is safe on a terminal and in the verdict files.
type Verdict struct {
	Check   string   `json:"check"`
	Outcome Outcome  `json:"outcome"`
	Reason  string   `json:"reason"`
	Notes   []string `json:"notes,omitempty"`
}

// ConformanceErrorDeadline is how long a server may take to refuse a bad
// request (CheckBadRequest): an error needs no model work, so it is answered
// promptly or not at all.
const ConformanceErrorDeadline = 10 * time.Second

// DefaultConformanceTimeout bounds each request of the suite when
// ANVIL_TIMEOUT is not set.
const DefaultConformanceTimeout = 2 * time.Minute

// conformanceSettings are the options only Conformance reads.
type conformanceSettings struct {
	required []string
}

// WithRequired makes the named checks mandatory: a SKIP of one of them (the
// server does not offer the feature) becomes a FAIL, e.g.
// WithRequired(CheckPrefixCache, CheckDeterminism) for a deployment that
// must cache prefixes and decode greedily. Names are those of
// ConformanceChecks; an unknown name fails the test with an
// *UnknownCheckError.
func WithRequired(checks ...string) Option {
	return func(s *settings) { s.conformance.required = append(s.conformance.required, checks...) }
}

// UnknownCheckError is a check name that is not one of ConformanceChecks.
type UnknownCheckError struct {
	// Option is where the name was given ("WithRequired").
	Option string
	// Name is the unknown name.
	Name string
}

func (e *UnknownCheckError) Error() string {
	return fmt.Sprintf("anviltest: %s(%q): want one of %s", e.Option, e.Name, strings.Join(ConformanceChecks(), ", "))
}

func (c *conformanceSettings) validate() error {
	for _, n := range c.required {
		if !slices.Contains(ConformanceChecks(), n) {
			return &UnknownCheckError{Option: "WithRequired", Name: n}
		}
	}
	return nil
}

// apply turns the SKIP of a required check into a FAIL.
func (c *conformanceSettings) apply(v Verdict) Verdict {
	if v.Outcome == Skip && slices.Contains(c.required, v.Check) {
		v.Outcome = Fail
		v.Reason = "required, but skipped: " + v.Reason
	}
	return v
}

// Conformance runs the conformance suite against the configured target,
// one subtest per check (see ConformanceChecks), and returns the verdicts
// of the checks that ran:
//
//	func TestConformance(t *testing.T) { anviltest.Conformance(t) }
//
// The target comes from the options and the ANVIL_* variables exactly as
// for Capacity (ANVIL_BASE_URL, ANVIL_MODEL, ANVIL_API_KEY_ENV,
// ANVIL_MAX_MODEL_LEN, ANVIL_TIMEOUT for each request, default
// DefaultConformanceTimeout); without a base URL the embedded fake server
// is started. A check's subtest fails for a violation, skips with a reason
// when the server lacks an optional feature, and logs what it saw either
// way. -run filters the checks as usual (-run Conformance/usage).
//
// The suite is bounded: a few dozen requests, each with a timeout and a
// small max_tokens (1024 where visible content must follow a reasoning
// model's thinking), one prompt longer than the advertised context window,
// and a capacity run of 8 requests for CheckIsolation.
//
// The verdicts are also written, as conformance.<start>.json and
// conformance.<start>.md (a Markdown table), into the artifact directory
// of Capacity (-artifacts, $ANVIL_OUT, ./anvil-out); their paths are
// logged.
func Conformance(t *testing.T, opts ...Option) *ConformanceReport {
	t.Helper()
	s := newSettings(opts)
	if err := s.conformance.validate(); err != nil {
		t.Fatal(err)
	}
	tgt, err := s.resolveTarget()
	if err != nil {
		t.Fatal(err)
	}
	if tgt.BaseURL == "" {
		if tgt, err = s.startFake(t, tgt); err != nil {
			t.Fatal(err)
		}
	}
	timeout, err := s.conformanceTimeout()
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	p, err := newProber(t.Context(), s, tgt, timeout)
	if err != nil {
		t.Fatal(err)
	}
	rep := &ConformanceReport{BaseURL: p.where, Model: p.model, StartedAt: started}
	for _, c := range checkTable() {
		t.Run(c.name, func(t *testing.T) {
			v := s.conformance.apply(p.runCheck(t.Context(), c))
			rep.Verdicts = append(rep.Verdicts, v)
			reportVerdict(t, v)
		})
	}
	if len(rep.Verdicts) == 0 {
		return rep
	}
	dir, err := s.artifactDir(t)
	if err != nil {
		t.Error(err)
		return rep
	}
	paths, err := rep.writeFiles(dir)
	if err != nil {
		t.Errorf("anviltest: writing the conformance verdicts: %v", err)
		return rep
	}
	t.Logf("conformance verdicts: %s %s", paths.json, paths.markdown)
	return rep
}

// conformanceTimeout is the per-request limit: ANVIL_TIMEOUT, else
// DefaultConformanceTimeout.
func (s *settings) conformanceTimeout() (time.Duration, error) {
	w, err := s.applyWorkloadEnv(capacity.Workload{})
	if err != nil {
		return 0, err
	}
	if w.Timeout > 0 {
		return w.Timeout, nil
	}
	return DefaultConformanceTimeout, nil
}

// verdictReporter is the part of *testing.T a verdict is reported through.
type verdictReporter interface {
	Helper()
	Log(args ...any)
	Error(args ...any)
	Skip(args ...any)
}

// reportVerdict logs what the check saw, then passes, fails or skips r with
// the verdict's reason. Skip ends the calling goroutine, so it comes last.
func reportVerdict(r verdictReporter, v Verdict) {
	r.Helper()
	for _, n := range v.Notes {
		r.Log(n)
	}
	switch v.Outcome {
	case Fail:
		r.Error("FAIL: " + v.Reason)
	case Skip:
		r.Skip("SKIP: " + v.Reason)
	default:
		r.Log("PASS: " + v.Reason)
	}
}

// check is one entry of the suite.
type check struct {
	name string
	run  func(p *prober, ctx context.Context) Verdict
}

// checkTable is the suite in order.
func checkTable() []check {
	return []check{
		{CheckModels, (*prober).checkModels},
		{CheckStreamFraming, (*prober).checkStreamFraming},
		{CheckUsage, (*prober).checkUsage},
		{CheckMaxTokens, (*prober).checkMaxTokens},
		{CheckFinishReason, (*prober).checkFinishReason},
		{CheckContent, (*prober).checkContent},
		{CheckReasoningSeparation, (*prober).checkReasoningSeparation},
		{CheckPromptTokens, (*prober).checkPromptTokens},
		{CheckPrefixCache, (*prober).checkPrefixCache},
		{CheckBadRequest, (*prober).checkBadRequest},
		{CheckIsolation, (*prober).checkIsolation},
		{CheckDeterminism, (*prober).checkDeterminism},
	}
}

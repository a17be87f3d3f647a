package conformance

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/artifact"
)

// The conformance checks, in the order a run takes them. Each name is
// the name of its subtest (go test -run Conformance/usage runs one) and of
// its row in the verdict files.
const (
	// nameModels: GET /models answers a model list that names the model
	// used, and the server advertises the model's context window where
	// capacity.Run looks for it (the /models entry, llama.cpp's /props,
	// ollama's /api/ps and /api/show); SKIP when it advertises none.
	nameModels = "models"
	// nameStreamFraming: a streamed chat completion answers 200 with
	// Content-Type text/event-stream, uncompressed when the request asked
	// for identity, carries its chunks as JSON "data:" events with no error
	// object, and ends with the terminal "data: [DONE]" and nothing after.
	nameStreamFraming = "stream_framing"
	// nameUsage: with stream_options.include_usage a usage object arrives
	// with prompt_tokens, completion_tokens and total_tokens equal to their
	// sum.
	nameUsage = "usage"
	// nameMaxTokens: an answer asked to be long is cut at max_tokens (and
	// at max_completion_tokens): at most that many completion tokens
	// (usage, else the output chunks as a lower bound) and finish_reason
	// "length".
	nameMaxTokens = "max_tokens"
	// nameFinishReason: the last chunk with choices carries a finish_reason
	// of the OpenAI set (stop, length, tool_calls, content_filter,
	// function_call).
	nameFinishReason = "finish_reason"
	// nameContent: a short question gets visible content in
	// delta.content; SKIP when the token budget ended inside the reasoning.
	nameContent = "content"
	// nameReasoningSeparation: reasoning arrives in reasoning_content or
	// reasoning, never as <think> text inside content; SKIP for a model that
	// does not reason.
	nameReasoningSeparation = "reasoning_separation"
	// namePromptTokens: usage.prompt_tokens agrees with the server's own
	// positive count of the same messages (POST /tokenize in vLLM's and
	// SGLang's messages form, or llama.cpp's POST /apply-template then
	// /tokenize with add_special) when the server has one, and a prompt
	// longer than the context window is refused with an error, not
	// silently truncated; SKIP when neither can be tried.
	namePromptTokens = "prompt_tokens"
	// namePrefixCache: a repeated long prefix reports cached tokens in
	// usage.prompt_tokens_details.cached_tokens; SKIP when the server never
	// reports them.
	namePrefixCache = "prefix_cache"
	// nameBadRequest: invalid JSON, an unknown model and a malformed
	// messages field each get a 4xx with an OpenAI-style {"error": {...}}
	// JSON body within errorDeadline (10 s), never a stream or a 5xx.
	nameBadRequest = "bad_request"
	// nameIsolation: concurrent requests asked to begin with their own
	// canary marker never see another request's marker (a capacity run with
	// Workload.RequestCanaries); SKIP when the model does not echo its
	// marker, which proves nothing either way.
	nameIsolation = "isolation"
	// nameDeterminism: the same request at temperature 0 twice gives the
	// same output; SKIP with the first difference when it does not
	// (informative: many engines are not deterministic across batches).
	nameDeterminism = "determinism"
	// nameMetrics: the server's Prometheus metrics endpoint
	// (Target.MetricsURL, else /metrics at the base URL's root) answers
	// in the text format; the verdict names the engine whose names it has
	// and the curated series it lacks. SKIP when there is none.
	nameMetrics = "metrics"
)

// Checks lists the check names in the order a run takes them.
func Checks() []string {
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
	// Check is the check's name (one of Checks).
	Check string `json:"check"`
	// Outcome is pass, fail or skip.
	Outcome Outcome `json:"outcome"`
	// Reason says why, in one line.
	Reason string `json:"reason"`
	// Notes are what the check saw: the answers, the counts, what was tried.
	Notes []string `json:"notes,omitempty"`
}

// errorDeadline is how long a server may take to refuse a bad request
// (nameBadRequest): an error needs no model work, so it is answered
// promptly or not at all.
const errorDeadline = 10 * time.Second

// defaultTimeout bounds each request of the suite when Config.Timeout is 0.
const defaultTimeout = 2 * time.Minute

// Config is what a Suite needs.
type Config struct {
	// Target is the endpoint; Target.Model empty means the first model
	// GET /models lists, Target.MaxModelLen 0 means the window the server
	// advertises.
	Target capacity.Target
	// APIKey is the bearer token, the value of the variable
	// Target.APIKeyEnv names ("" sends none).
	APIKey string
	// Timeout bounds each request; 0 means 2 minutes.
	Timeout time.Duration
	// Run runs the isolation check's capacity benchmark, a short one, as
	// capacity.Run does; nil means capacity.Run.
	Run func(ctx context.Context, t capacity.Target, w capacity.Workload) (*artifact.Report, error)
	// Required names checks whose SKIP is a FAIL (the deployment must offer
	// the feature), e.g. "prefix_cache" for one that must cache
	// prefixes. Names are those of Checks; an unknown one is an error of
	// New.
	Required []string
}

// unknownCheckError is a check name that is not one of Checks.
type unknownCheckError struct {
	// Option is where the name was given ("Config.Required").
	Option string
	// Name is the unknown name.
	Name string
}

// Error names the option, the name and the check names allowed.
func (e *unknownCheckError) Error() string {
	return fmt.Sprintf("conformance: %s(%q): want one of %s", e.Option, e.Name, strings.Join(Checks(), ", "))
}

// A Suite runs the checks against one target. Its methods are safe for
// use by one goroutine at a time.
type Suite struct {
	p        *prober
	required []string
}

// New resolves the target, finds the model to send and its context window
// with capacity.Discover, as capacity.Run does (see the models check), and
// draws the run's nonce, which makes every prompt of the run new to the
// server's caches. A failed discovery is no error: the models check judges
// it. The error is for a configuration that cannot be run (the target, a
// name in Required).
func New(ctx context.Context, c Config) (*Suite, error) {
	for _, n := range c.Required {
		if !slices.Contains(Checks(), n) {
			return nil, &unknownCheckError{Option: "Config.Required", Name: n}
		}
	}
	if c.Timeout == 0 {
		c.Timeout = defaultTimeout
	}
	if c.Run == nil {
		c.Run = capacity.Run
	}
	p, err := newProber(ctx, c)
	if err != nil {
		return nil, err
	}
	return &Suite{p: p, required: slices.Clone(c.Required)}, nil
}

// Check runs the named check and returns its verdict, its text scrubbed of
// the target's credentials and safe to print. A name that is not one of
// Checks gives a FAIL naming it.
func (s *Suite) Check(ctx context.Context, name string) Verdict {
	for _, c := range checkTable() {
		if c.name == name {
			return s.apply(s.p.runCheck(ctx, c))
		}
	}
	return Verdict{Check: s.p.safe(name), Outcome: Fail, Reason: (&unknownCheckError{Option: "Suite.Check", Name: s.p.safe(name)}).Error()}
}

// apply turns the SKIP of a required check into a FAIL.
func (s *Suite) apply(v Verdict) Verdict {
	if v.Outcome == Skip && slices.Contains(s.required, v.Check) {
		v.Outcome = Fail
		v.Reason = "required, but skipped: " + v.Reason
	}
	return v
}

// NewReport returns an empty report of a run that started at started: the
// base URL without userinfo, query or fragment and the model probed, both
// scrubbed of the target's credentials (a server may echo them in the
// model id) and safe to print.
func (s *Suite) NewReport(started time.Time) *Report {
	return &Report{BaseURL: s.p.safe(s.p.where), Model: s.p.safe(s.p.model), StartedAt: started}
}

// check is one entry of the suite.
type check struct {
	name string
	run  func(p *prober, ctx context.Context) Verdict
}

// checkTable is the suite in order.
func checkTable() []check {
	return []check{
		{nameModels, (*prober).checkModels},
		{nameStreamFraming, (*prober).checkStreamFraming},
		{nameUsage, (*prober).checkUsage},
		{nameMaxTokens, (*prober).checkMaxTokens},
		{nameFinishReason, (*prober).checkFinishReason},
		{nameContent, (*prober).checkContent},
		{nameReasoningSeparation, (*prober).checkReasoningSeparation},
		{namePromptTokens, (*prober).checkPromptTokens},
		{namePrefixCache, (*prober).checkPrefixCache},
		{nameBadRequest, (*prober).checkBadRequest},
		{nameIsolation, (*prober).checkIsolation},
		{nameDeterminism, (*prober).checkDeterminism},
		{nameMetrics, (*prober).checkMetrics},
	}
}

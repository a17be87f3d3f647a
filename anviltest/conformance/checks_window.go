package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/artifact"
)

// overWindowFactor sizes the over-long prompt of namePromptTokens: this
// many times the window, at capacity's estimate of 3 characters per token.
// Tokenizers count code-like text at well under 6 characters per token, so
// the prompt is longer than the window for any of them.
const overWindowFactor = 2

func (p *prober) checkPromptTokens(ctx context.Context) Verdict {
	var notes, problems, skipped []string
	judged := 0

	// The counted prompt against /tokenize.
	user := "Count the tokens of this prompt (conformance run " + p.nonce + "). " + filler(256)
	s, err := p.exchange(ctx, p.body(user, 1, nil), nil)
	switch {
	case err != nil:
		return verdict(Fail, "the streamed request failed: "+err.Error())
	case s.failed() != "":
		return verdict(Fail, s.failed())
	}
	notes = append(notes, p.w.api+": "+s.summary())
	var counted *int
	if s.usage != nil {
		counted = s.usage.prompt
	}
	n, where, tried := p.tokenize(ctx, user)
	for _, why := range tried {
		notes = append(notes, "no count: "+why)
	}
	switch {
	case counted == nil:
		skipped = append(skipped, "no "+usageNames[p.w.api][0]+" in "+p.w.usageWhere+" to compare with the server's count")
	case where == "" && p.bare():
		skipped = append(skipped, "no positive token count from the server (/tokenize of the prompt, or of its content with add_special)")
	case where == "":
		skipped = append(skipped, "no positive token count from the server (/tokenize in the messages form, /apply-template then /tokenize)")
	case n != *counted:
		problems = append(problems, fmt.Sprintf("%s counts %d tokens for the prompt, %s %s %d", where, n, p.w.usageWhere, usageNames[p.w.api][0], *counted))
	default:
		judged++
		notes = append(notes, fmt.Sprintf("%s agrees: %d tokens", where, n))
	}

	// A prompt longer than the window.
	win, from := p.window()
	// A window capacity.Run would refuse (beyond its largest) is none.
	if _, err := (capacity.Target{BaseURL: "http://window.invalid", MaxModelLen: win}).Resolved(); win <= 0 || err != nil {
		skipped = append(skipped, "no context window known (the server advertises none where capacity.Run looks, see models; Target.MaxModelLen or ANVIL_MAX_MODEL_LEN declares one): the over-long prompt is not tried")
	} else {
		long := "Conformance run " + p.nonce + ": this prompt is longer than the context window. " + filler(overWindowFactor*win)
		s, err := p.exchange(ctx, p.body(long, 1, nil), nil)
		if err != nil {
			return verdict(Fail, "the over-long prompt's request failed: "+err.Error(), notes...)
		}
		notes = append(notes, fmt.Sprintf("prompt of %d characters for a window of %d tokens (%s): %s", len(long), win, from, s.summary()))
		switch {
		case s.status != http.StatusOK:
			judged++
			notes = append(notes, fmt.Sprintf("refused: HTTP %d %s", s.status, excerpt(p.scrub, s.body)))
		case len(s.errObjects) > 0:
			judged++
			notes = append(notes, "refused in the stream: "+s.errObjects[0])
		default:
			counted := "no usage"
			if s.usage != nil {
				counted = "usage." + usageNames[p.w.api][0] + " " + fmtInt(s.usage.prompt)
			}
			problems = append(problems, fmt.Sprintf("a prompt of about %d tokens (%d characters) for a window of %d was accepted (%s): silently truncated, or the window is not %d",
				overWindowFactor*win, len(long), win, counted, win))
		}
	}
	notes = append(notes, skipped...)
	switch {
	case len(problems) > 0:
		return verdict(Fail, strings.Join(problems, "; "), notes...)
	case judged == 0:
		return verdict(Skip, strings.Join(skipped, "; "), notes...)
	}
	return verdict(Pass, fmt.Sprintf("%d of 2 sub-checks judged, all agree", judged), notes...)
}

// The forms of a server's own count of a chat request's prompt tokens.
const (
	// tokenizePath is vLLM's and SGLang's POST /tokenize {"model",
	// "messages", "add_generation_prompt": true}, answered {"count": n} or
	// {"tokens": [...]}; llama.cpp's POST /tokenize {"content",
	// "add_special"} answers {"tokens": [...]} and ignores "messages"
	// (an empty list).
	tokenizePath = "/tokenize"
	// applyTemplatePath is llama.cpp's POST /apply-template {"messages"}:
	// {"prompt": the chat template applied}, whose /tokenize count with
	// add_special (the BOS token) is usage.prompt_tokens.
	applyTemplatePath = "/apply-template"
)

// tokenizeRoots are where /tokenize is tried: the server root (vLLM,
// SGLang, llama.cpp), then under the base URL.
var tokenizeRoots = [...]string{"", "/v1"}

// tokenize counts the tokens of a chat request with the one user message
// in the forms a server has: the messages form of /tokenize (at the server
// root, then under /v1), then llama.cpp's /apply-template and the content
// form of /tokenize. Only a positive count is one: a non-empty prompt has
// tokens, and llama.cpp answers {"tokens": []} to a body it does not read.
//
// tried lists the forms that gave no count, with their answers.
func (p *prober) tokenize(ctx context.Context, user string) (n int, where string, tried []string) {
	if p.bare() {
		return p.tokenizeBare(ctx, user)
	}
	messages := []map[string]string{{"role": "user", "content": user}}
	body, _ := json.Marshal(map[string]any{"model": p.model, "messages": messages, "add_generation_prompt": true})
	for _, r := range tokenizeRoots {
		path := r + tokenizePath
		n, why := p.count(ctx, path, body)
		if n > 0 {
			return n, "POST " + path + " (messages)", tried
		}
		tried = append(tried, why)
	}
	tb, _ := json.Marshal(map[string]any{"messages": messages})
	h, err := p.do(ctx, http.MethodPost, p.root()+applyTemplatePath, tb, nil, p.timeout)
	var tmpl struct {
		Prompt *string `json:"prompt"`
	}
	switch {
	case err != nil:
		tried = append(tried, applyTemplatePath+": "+err.Error())
	case h.status != http.StatusOK:
		tried = append(tried, fmt.Sprintf("%s: HTTP %d", applyTemplatePath, h.status))
	case json.Unmarshal(h.body, &tmpl) != nil || tmpl.Prompt == nil || *tmpl.Prompt == "":
		tried = append(tried, fmt.Sprintf("%s: no prompt in %s", applyTemplatePath, excerpt(p.scrub, h.body)))
	default:
		cb, _ := json.Marshal(map[string]any{"content": *tmpl.Prompt, "add_special": true})
		n, why := p.count(ctx, tokenizePath, cb)
		if n > 0 {
			return n, "POST " + applyTemplatePath + " then POST " + tokenizePath + " (content, add_special)", tried
		}
		tried = append(tried, why+" (content of "+applyTemplatePath+")")
	}
	return 0, "", tried
}

// bare reports whether the API sends its prompt as bare text, without a
// chat template (completions, embeddings).
func (p *prober) bare() bool { return p.w.api == apiCompletions || p.w.api == apiEmbeddings }

// tokenizeBare counts a bare prompt as the server counts it in a request:
// vLLM's and SGLang's /tokenize {"model", "prompt"} (special tokens
// added, as their completions do), then llama.cpp's {"content",
// "add_special": true} (the BOS token its completions add).
func (p *prober) tokenizeBare(ctx context.Context, user string) (n int, where string, tried []string) {
	for _, form := range []struct {
		name string
		body map[string]any
	}{
		{"prompt", map[string]any{"model": p.model, "prompt": user}},
		{"content, add_special", map[string]any{"content": user, "add_special": true}},
	} {
		body, _ := json.Marshal(form.body)
		for _, r := range tokenizeRoots {
			path := r + tokenizePath
			n, why := p.count(ctx, path, body)
			if n > 0 {
				return n, "POST " + path + " (" + form.name + ")", tried
			}
			tried = append(tried, why+" ("+form.name+")")
		}
	}
	return 0, "", tried
}

// count asks POST {root}path with body for a token count: "count", else
// the length of "tokens". A count that is not positive is none; why says
// what came back instead.
func (p *prober) count(ctx context.Context, path string, body []byte) (n int, why string) {
	h, err := p.do(ctx, http.MethodPost, p.root()+path, body, nil, p.timeout)
	if err != nil {
		return 0, path + ": " + err.Error()
	}
	if h.status != http.StatusOK {
		return 0, fmt.Sprintf("%s: HTTP %d", path, h.status)
	}
	var ans struct {
		Count  *int              `json:"count"`
		Tokens []json.RawMessage `json:"tokens"`
	}
	if err := json.Unmarshal(h.body, &ans); err != nil || ans.Count == nil && ans.Tokens == nil {
		return 0, fmt.Sprintf("%s: no count or tokens in %s", path, excerpt(p.scrub, h.body))
	}
	n = len(ans.Tokens)
	if ans.Count != nil {
		n = *ans.Count
	}
	if n < 1 {
		return 0, fmt.Sprintf("%s: a count of %d for a non-empty prompt is no count (%s)", path, n, excerpt(p.scrub, h.body))
	}
	return n, ""
}

// The capacity run of nameIsolation: a few concurrent requests with
// canary markers, short prompts, room for a reasoning model to think
// before the marker.
const (
	isolationRequests    = 8
	isolationConcurrency = 4
	isolationContext     = 256
	// isolationWindow is the context length assumed for the run's plan when
	// none is known: more than the prompt and answerBudget need.
	isolationWindow = 4096
)

func (p *prober) checkIsolation(ctx context.Context) Verdict {
	if !p.w.streams() {
		return verdict(Skip, "an embeddings answer has no text to carry a canary marker")
	}
	t := p.target
	t.Model = p.model
	t.HTTPClient = p.hc
	t.BaseURL = p.base
	from := "Target.MaxModelLen"
	if t.MaxModelLen == 0 {
		t.MaxModelLen, from = p.window()
	}
	if t.MaxModelLen == 0 {
		t.MaxModelLen, from = isolationWindow, "assumed: none was found"
	}
	t.Margin = capacity.None
	// The answer budget fits the window with the prompt (a small window
	// gets a smaller budget, never below what a marker needs).
	maxTokens := min(answerBudget, t.MaxModelLen-2*isolationContext)
	w := capacity.Workload{
		Requests:           isolationRequests,
		Concurrency:        isolationConcurrency,
		ContextTokens:      isolationContext,
		SharedPrefixTokens: capacity.None,
		PromptCacheMode:    "unique",
		MaxTokens:          maxTokens,
		RequestCanaries:    true,
		Seed:               int64(p.nonceNumber()),
		Timeout:            p.timeout,
	}
	// Too small a window leaves no answer budget a canary marker fits in
	// (capacity's bound on MaxTokens with RequestCanaries).
	if _, err := w.Resolved(); err != nil {
		return verdict(Skip, fmt.Sprintf("a context window of %d tokens (%s) leaves no room for %d-token prompts with canary answers: %v", t.MaxModelLen, from, isolationContext, err))
	}
	rep, err := p.run(ctx, t, w)
	if errors.Is(err, capacity.ErrInvalidConfig) {
		return verdict(Skip, "the capacity run could not be planned for this target: "+err.Error())
	}
	if rep == nil {
		if err == nil {
			err = fmt.Errorf("the runner returned no report")
		}
		return verdict(Fail, "the capacity run failed: "+err.Error())
	}
	return isolationVerdict(rep, err)
}

// nonceNumber is the nonce as a small non-negative number, the seed of the
// canary markers.
func (p *prober) nonceNumber() uint32 {
	var n uint32
	for _, c := range p.nonce {
		n = n*31 + uint32(c)
	}
	return n % 1_000_000
}

// isolationVerdict judges the canary checks of a capacity run: every
// response's, successful or failed.
func isolationVerdict(rep *artifact.Report, runErr error) Verdict {
	var checks []*artifact.CanaryCheck
	for _, r := range rep.RequestTimings {
		if r.RequestCanary != nil {
			checks = append(checks, r.RequestCanary)
		}
	}
	classes := map[artifact.FailureClass]int{}
	for _, f := range rep.Failures {
		classes[f.FailureClass]++
		if f.ResponseTiming != nil && f.ResponseTiming.RequestCanary != nil {
			checks = append(checks, f.ResponseTiming.RequestCanary)
		}
	}
	var byClass []string
	for _, c := range slices.Sorted(maps.Keys(classes)) {
		byClass = append(byClass, fmt.Sprintf("%s %d", c, classes[c]))
	}
	if len(byClass) == 0 {
		byClass = []string{"none"}
	}
	notes := []string{fmt.Sprintf("capacity run: %d requests, %d succeeded, failures by class: %s; %d responses with a canary check",
		rep.Requests, rep.Completed, strings.Join(byClass, ", "), len(checks))}
	if runErr != nil {
		notes = append(notes, "capacity run error: "+runErr.Error())
	}
	if len(rep.Failures) > 0 {
		notes = append(notes, "first failure: "+rep.Failures[0].ErrorMessage)
	}
	var foreign []string
	own := 0
	for _, c := range checks {
		if c.ForeignMarkerCount > 0 {
			foreign = append(foreign, fmt.Sprintf("%s saw %d other marker(s)", c.Marker, c.ForeignMarkerCount))
		}
		if c.MarkerAtStart {
			own++
		}
	}
	switch {
	case len(foreign) > 0:
		return verdict(Fail, fmt.Sprintf("a response carried another request's canary marker: %s", strings.Join(foreign, "; ")), notes...)
	case len(checks) < 2:
		return verdict(Skip, fmt.Sprintf("only %d of %d concurrent responses could be checked (failures by class %v)", len(checks), isolationRequests, classes), notes...)
	case own < len(checks):
		return verdict(Skip, fmt.Sprintf("the model began only %d of %d answers with its marker as asked: isolation is not proven", own, len(checks)), notes...)
	}
	return verdict(Pass, fmt.Sprintf("%d responses, %d at a time, each began with its own marker and carried no other", len(checks), isolationConcurrency), notes...)
}

package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

func (p *prober) checkModels(context.Context) Verdict {
	d := p.disc
	switch {
	case d.SuggestedBaseURL != "":
		return verdict(Fail, p.notAPIRoot(), p.discoveryNotes()...)
	case d.ModelsError != "":
		return verdict(Fail, "GET /models failed: "+d.ModelsError, p.discoveryNotes()...)
	case d.Listed == nil:
		return verdict(Fail, fmt.Sprintf("GET /models was not asked: %v", p.discErr))
	case !contains(d.Listed, p.model):
		return verdict(Fail, fmt.Sprintf("GET /models does not list the model %q (it lists %q)", p.model, d.Listed), p.discoveryNotes()...)
	}
	notes := p.discoveryNotes()
	if d.Advertised == 0 {
		why := fmt.Sprintf("the server advertises no context window for %q (none of max_model_len, max_context_length, context_length, meta.n_ctx in its /models entry, no /props, /api/ps or /api/show answer with one)", p.model)
		return verdict(Skip, why, notes...)
	}
	return verdict(Pass, fmt.Sprintf("lists %q, context window %d advertised by %s", p.model, d.Advertised, advertisedFrom(d)), notes...)
}

// discoveryNotes say what capacity.Discover found and where, and what
// each endpoint it asked answered.
func (p *prober) discoveryNotes() []string {
	d := p.disc
	notes := []string{fmt.Sprintf("capacity.Discover: model %q from %s, GET /models lists %q", d.Model, d.ModelSource, d.Listed)}
	if d.Advertised > 0 {
		notes = append(notes, fmt.Sprintf("advertised window %d from %s", d.Advertised, advertisedFrom(d)))
	}
	if d.Window > 0 {
		notes = append(notes, fmt.Sprintf("planned window %d from %s, truncation window %d", d.Window, d.WindowSource, d.TruncationWindow))
	}
	if d.Slots > 0 {
		notes = append(notes, fmt.Sprintf("%d slots from %s", d.Slots, d.SlotsSource))
	}
	if d.Note != "" {
		notes = append(notes, d.Note)
	}
	notes = append(notes, d.Asked...) // "GET /props: HTTP 404 Not Found"
	if p.discErr != nil {
		notes = append(notes, "capacity.Discover: "+p.discErr.Error())
	}
	return notes
}

// errorCase is one bad request of nameBadRequest.
type errorCase struct {
	name string
	body []byte
}

func (p *prober) checkBadRequest(ctx context.Context) Verdict {
	unknown := p.body("Hello.", 1, map[string]any{"model": "anvil-conformance-no-such-model-" + p.nonce})
	model, _ := json.Marshal(p.model)
	w := p.w
	stream, limit := "", ""
	if w.streams() {
		stream = `, "stream": true`
	}
	if len(w.limits) > 0 {
		limit = `, "` + w.limits[0] + `": 1`
	}
	cases := []errorCase{
		{"invalid JSON", []byte(`{"model": ` + string(model) + stream + `, "` + w.promptKey + `": [{"role": "user", "content": "Hel`)},
		{"unknown model", unknown},
		{w.malformedName, []byte(`{"model": ` + string(model) + stream + limit + `, ` + w.malformed + `}`)},
	}
	accept := eventStreamType
	if !w.streams() {
		accept = "application/json"
	}
	var notes, problems []string
	for _, c := range cases {
		hdr := http.Header{"Accept": {accept}}
		w.header(hdr, p.apiKey)
		h, err := p.do(ctx, http.MethodPost, p.base+w.path, c.body, hdr, errorDeadline)
		if err != nil {
			problems = append(problems, c.name+": "+err.Error())
			continue
		}
		notes = append(notes, c.name+": "+h.String())
		if why := w.errorShape(h); why != "" {
			problems = append(problems, c.name+": "+why)
		}
	}
	if len(problems) > 0 {
		return verdict(Fail, strings.Join(problems, "; "), notes...)
	}
	return verdict(Pass, fmt.Sprintf("each of invalid JSON, an unknown model and %s got a 4xx with %s", w.malformedName, w.errorForm), notes...)
}

// errorStatus says how an answer to a bad request falls short in its
// status and Content-Type: a 4xx, JSON.
func errorStatus(h *httpSeen) []string {
	var problems []string
	if h.status < 400 || h.status > 499 {
		problems = append(problems, fmt.Sprintf("HTTP %d, want a 4xx", h.status))
	}
	mt := mediaType(h.contentType)
	if mt == eventStreamType {
		problems = append(problems, "answered with a stream")
	} else if mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		problems = append(problems, fmt.Sprintf("Content-Type %q, want application/json", h.contentType))
	}
	return problems
}

// openAIError says how an answer to a bad request falls short of an
// OpenAI-style error: a 4xx, a JSON Content-Type and a body
// {"error": {"message": "...", ...}}. Empty when it does not.
func openAIError(h *httpSeen) string {
	problems := errorStatus(h)
	var body struct {
		Error json.RawMessage `json:"error"`
	}
	var errObj struct {
		Message *string `json:"message"`
	}
	switch {
	case json.Unmarshal(h.body, &body) != nil:
		problems = append(problems, "the body is not JSON")
	case len(body.Error) == 0 || string(body.Error) == "null":
		problems = append(problems, `no "error" member`)
	case json.Unmarshal(body.Error, &errObj) != nil:
		problems = append(problems, fmt.Sprintf(`"error" is %s, want an object`, excerpt(h.scrub, body.Error)))
	case errObj.Message == nil:
		problems = append(problems, `"error" has no "message" string`)
	}
	return strings.Join(problems, ", ")
}

// prefixCacheTokens is the estimated size of the prefix namePrefixCache
// repeats: many cache blocks of any engine (vLLM 16, SGLang 1, llama.cpp
// 256 tokens).
const prefixCacheTokens = 2048

func (p *prober) checkPrefixCache(ctx context.Context) Verdict {
	if !p.w.streams() {
		return verdict(Skip, "an embeddings answer reports no cached tokens")
	}
	// A server that sent no usage when asked never reports cached tokens:
	// the long prompts are not sent.
	base, err := p.baseExchange(ctx)
	if err == nil && base.failed() == "" && base.usage == nil {
		return verdict(Skip, "no usage object when asked (see usage): cached tokens are never reported", base.summary())
	}
	size := prefixCacheTokens
	if win, _ := p.window(); win > 0 {
		size = min(size, win/2) // room for the template and the answer
	}
	// The prefix is sized by what the base exchange's prompt counted, so
	// that it fits the window on a tokenizer of fewer characters per token
	// than filler assumes (llama.cpp's tiny models count about 1.1).
	chars := float64(size * fillerCharsPerToken)
	if err == nil && base.usage != nil && base.usage.prompt != nil && *base.usage.prompt > 0 {
		per := float64(len(p.baseQuestion)) / float64(*base.usage.prompt)
		chars = float64(size) * min(max(per, 1), fillerCharsPerToken)
	}
	prefix := "Conformance run " + p.nonce + ". " + filler(int(chars)/fillerCharsPerToken)
	var notes []string
	var seen [2]*usageSeen
	for i, q := range []string{"Question one: reply with the word yes.", "Question two: reply with the word no."} {
		s, err := p.stream(ctx, p.body(prefix+" "+q, 1, nil), nil)
		if err != nil {
			return verdict(Fail, "the streamed request failed: "+err.Error(), notes...)
		}
		if why := s.failed(); why != "" {
			return verdict(Fail, why, notes...)
		}
		notes = append(notes, fmt.Sprintf("request %d: %s", i+1, s.summary()))
		seen[i] = s.usage
	}
	cold, warm := seen[0], seen[1]
	switch {
	case warm == nil:
		return verdict(Skip, "no usage object: cached tokens are never reported", notes...)
	case !warm.hasDetails && (cold == nil || !cold.hasDetails):
		return verdict(Skip, "the server never reports "+p.w.cachedWhere, notes...)
	case warm.cached == nil:
		return verdict(Fail, p.w.cachedWhere+" is not an integer on the repeat", notes...)
	case *warm.cached == 0:
		return verdict(Fail, fmt.Sprintf("%s 0 for a repeated prefix of about %d tokens: prefix caching is off or not reported", p.w.cachedWhere, size), notes...)
	case warm.prompt != nil && *warm.cached > *warm.prompt:
		return verdict(Fail, fmt.Sprintf("%d cached tokens exceed the %d prompt tokens", *warm.cached, *warm.prompt), notes...)
	}
	return verdict(Pass, fmt.Sprintf("the repeat reported %d of %s prompt tokens cached (first request: %s)",
		*warm.cached, fmtInt(warm.prompt), fmtIntOf(cold)), notes...)
}

func fmtIntOf(u *usageSeen) string {
	if u == nil {
		return "no usage"
	}
	return fmtInt(u.cached)
}

// fillerCharsPerToken is capacity's estimate of the characters of a token,
// the one filler sizes by.
const fillerCharsPerToken = 3

// filler is code-like text of about tokens tokens (fillerCharsPerToken
// characters each), numbered so that no two statements are alike.
// It is one line: the checks judge their subject, not a server's handling
// of newlines.
func filler(tokens int) string {
	var b strings.Builder
	for i := 0; b.Len() < tokens*fillerCharsPerToken; i++ {
		fmt.Fprintf(&b, "def helper_%d(x): return compute(x, %d); ", i, i*7)
	}
	return b.String()
}

package conformance

import (
	"context"
	"fmt"
	"net/http"
	"strings"
)

func verdict(o Outcome, reason string, notes ...string) Verdict {
	return Verdict{Outcome: o, Reason: reason, Notes: notes}
}

// finishReasons are the finish_reason values of the OpenAI chat
// completion object.
var finishReasons = [...]string{"stop", "length", "tool_calls", "content_filter", "function_call"}

// judgedBase is the base exchange, or the FAIL verdict of a request that
// gave no stream to judge.
func (p *prober) judgedBase(ctx context.Context) (*streamSeen, *Verdict) {
	s, err := p.baseExchange(ctx)
	if err != nil {
		v := verdict(Fail, "the streamed request failed: "+err.Error())
		return nil, &v
	}
	if why := s.failed(); why != "" {
		v := verdict(Fail, why)
		return nil, &v
	}
	return s, nil
}

func (p *prober) checkStreamFraming(ctx context.Context) Verdict {
	if !p.w.streams() {
		return p.checkAnswerFraming(ctx)
	}
	s, bad := p.judgedBase(ctx)
	if bad != nil {
		return *bad
	}
	var problems []string
	if mt := mediaType(s.contentType); mt != eventStreamType {
		problems = append(problems, fmt.Sprintf("Content-Type %q, want %s", s.contentType, eventStreamType))
	}
	if ce := s.contentEncoding; ce != "" && !strings.EqualFold(ce, "identity") {
		problems = append(problems, fmt.Sprintf("Content-Encoding %q although the request sent Accept-Encoding: identity", ce))
	}
	if s.events == 0 {
		problems = append(problems, "no data: event at all")
	}
	if n := len(s.badJSON); n > 0 {
		problems = append(problems, fmt.Sprintf("%d data events are not JSON (first: %s)", n, s.badJSON[0]))
	}
	if n := len(s.errObjects); n > 0 {
		problems = append(problems, fmt.Sprintf("an in-stream error object: %s", s.errObjects[0]))
	}
	if s.readErr != nil {
		problems = append(problems, "the stream ended abnormally: "+s.readErr.Error())
	}
	if !s.done && s.readErr == nil {
		problems = append(problems, "no terminal "+p.w.terminal)
	}
	if s.afterDone > 0 {
		problems = append(problems, fmt.Sprintf("%d data events after the terminal %s", s.afterDone, p.w.terminal))
	}
	if n := len(s.mismatched); n > 0 {
		problems = append(problems, fmt.Sprintf("events whose SSE name is not their data's type (a client dispatches on either): %s", strings.Join(s.mismatched, ", ")))
	}
	notes := []string{s.summary()}
	if len(s.names) > 0 {
		notes = append(notes, fmt.Sprintf("event types %q", s.names))
	}
	if len(s.objects) > 0 {
		notes = append(notes, fmt.Sprintf("chunk object %q", s.objects))
	}
	if len(problems) > 0 {
		return verdict(Fail, strings.Join(problems, "; "), notes...)
	}
	return verdict(Pass, fmt.Sprintf("%s, %d JSON data events, terminal %s", eventStreamType, s.jsonEvents(), p.w.terminal), notes...)
}

func (p *prober) checkUsage(ctx context.Context) Verdict {
	if !p.w.streams() {
		return p.checkEmbeddingsUsage(ctx)
	}
	s, bad := p.judgedBase(ctx)
	if bad != nil {
		return *bad
	}
	notes := []string{s.summary()}
	u := s.usage
	if u == nil {
		if p.w.api == apiChat || p.w.api == apiCompletions {
			return verdict(Fail, "no usage object, although the request set stream_options.include_usage", notes...)
		}
		return verdict(Fail, "no usage object in "+p.w.usageWhere, notes...)
	}
	names := usageNames[p.w.api]
	var problems []string
	if u.prompt == nil {
		problems = append(problems, names[0]+" is not an integer")
	}
	if u.completion == nil {
		problems = append(problems, names[1]+" is not an integer")
	}
	switch {
	case p.w.api == apiMessages:
		// The Messages API has no total; its input count is reported
		// twice by some servers, and must agree.
		if a, b := s.startInput, s.deltaInput; a != nil && b != nil && *a != *b {
			problems = append(problems, fmt.Sprintf("message_start reports input_tokens %d, message_delta %d: a client that reads the prompt's count when the answer starts gets another count than at its end", *a, *b))
		}
	case u.total == nil:
		problems = append(problems, names[2]+" is not an integer")
	case u.prompt != nil && u.completion != nil && *u.total != *u.prompt+*u.completion:
		problems = append(problems, fmt.Sprintf("%s %d != %s %d + %s %d", names[2], *u.total, names[0], *u.prompt, names[1], *u.completion))
	}
	if u.completion != nil && *u.completion < 1 && s.outputChunks() > 0 {
		problems = append(problems, fmt.Sprintf("%s %d for %d output chunks", names[1], *u.completion, s.outputChunks()))
	}
	if u.prompt != nil && *u.prompt < 1 {
		problems = append(problems, fmt.Sprintf("%s %d for a non-empty prompt", names[0], *u.prompt))
	}
	if r := u.reasoning; r != nil && u.completion != nil && *r > *u.completion {
		problems = append(problems, fmt.Sprintf("output_tokens_details.reasoning_tokens %d exceeds output_tokens %d", *r, *u.completion))
	}
	if len(problems) > 0 {
		return verdict(Fail, strings.Join(problems, "; "), notes...)
	}
	switch p.w.api {
	case apiResponses:
		return verdict(Pass, fmt.Sprintf("input_tokens %d + output_tokens %d = total_tokens %d, in %s of %s",
			*u.prompt, *u.completion, *u.total, p.w.usageWhere, p.w.terminal), notes...)
	case apiMessages:
		return verdict(Pass, fmt.Sprintf("input_tokens %s (%d prompt tokens with the cache's), output_tokens %d, in %s",
			fmtInt(u.input), *u.prompt, *u.completion, p.w.usageWhere), notes...)
	}
	where := "in a final chunk with no choices"
	if s.usageWithChoices {
		where = "in the last chunk with choices (OpenAI sends a separate chunk with \"choices\": [])"
	}
	if s.usageObjects > 1 {
		where += fmt.Sprintf(", %d usage objects in all (the last one judged)", s.usageObjects)
	}
	return verdict(Pass, fmt.Sprintf("prompt_tokens %d + completion_tokens %d = total_tokens %d, %s",
		*u.prompt, *u.completion, *u.total, where), notes...)
}

// usageField names the prompt (0), completion (1) or total (2) count
// of the API's usage where it is: usage.completion_tokens, or
// output_tokens in message_delta's usage.
func (w *wire) usageField(i int) string {
	if !strings.Contains(w.usageWhere, " ") {
		return w.usageWhere + "." + usageNames[w.api][i]
	}
	return usageNames[w.api][i] + " in " + w.usageWhere
}

// usageNames are the names of the prompt, completion and total counts
// of each API's usage.
var usageNames = map[string][3]string{
	apiChat:        {"prompt_tokens", "completion_tokens", "total_tokens"},
	apiCompletions: {"prompt_tokens", "completion_tokens", "total_tokens"},
	apiEmbeddings:  {"prompt_tokens", "", "total_tokens"},
	apiResponses:   {"input_tokens", "output_tokens", "total_tokens"},
	apiMessages:    {"input_tokens", "output_tokens", ""},
}

func (p *prober) checkFinishReason(ctx context.Context) Verdict {
	if !p.w.streams() {
		return verdict(Skip, "an embeddings answer generates nothing: it has no stop reason")
	}
	s, bad := p.judgedBase(ctx)
	if bad != nil {
		return *bad
	}
	notes := []string{s.summary()}
	if len(s.finishes) > 1 {
		notes = append(notes, fmt.Sprintf("stop reasons in order: %q", s.finishes))
	}
	chat := p.w.api == apiChat || p.w.api == apiCompletions
	switch {
	case chat && s.choiceChunks == 0:
		return verdict(Fail, "no chunk with choices", notes...)
	case chat && s.stopReason == nil:
		return verdict(Fail, "the last chunk with choices has no finish_reason (null or absent)", notes...)
	case s.stopReason == nil:
		return verdict(Fail, "no stop reason in "+p.w.stopWhere, notes...)
	case !contains(p.w.stops, *s.stopReason):
		return verdict(Fail, fmt.Sprintf("%s is %q, none of %q", p.w.stopWhere, *s.stopReason, p.w.stops), notes...)
	}
	return verdict(Pass, fmt.Sprintf("%s is %q", p.w.stopWhere, *s.stopReason), notes...)
}

func (p *prober) checkContent(ctx context.Context) Verdict {
	if !p.w.streams() {
		return p.checkVectors(ctx)
	}
	s, bad := p.judgedBase(ctx)
	if bad != nil {
		return *bad
	}
	content := s.content.scrubbed(p.scrub)
	notes := []string{s.summary(), fmt.Sprintf("content: %q", excerpt(nil, []byte(content)))}
	if strings.TrimSpace(content) != "" {
		return verdict(Pass, fmt.Sprintf("%d content chunks of visible text", s.contentChunks), notes...)
	}
	if s.reasoningChunks > 0 && s.stopReason != nil && *s.stopReason == p.w.cutStop {
		return verdict(Skip, fmt.Sprintf("the %d-token budget ended inside the reasoning (%d reasoning chunks): no content to judge", answerBudget, s.reasoningChunks), notes...)
	}
	if s.reasoningChunks > 0 {
		return verdict(Fail, fmt.Sprintf("the answer ended with reasoning only (%d reasoning chunks) and no content", s.reasoningChunks), notes...)
	}
	return verdict(Fail, "no visible content in "+p.w.contentWhere, notes...)
}

func (p *prober) checkReasoningSeparation(ctx context.Context) Verdict {
	if p.w.reasoningWhere == "" {
		return verdict(Skip, fmt.Sprintf("the %s API has no reasoning channel: whatever a model writes is its text", p.w.api))
	}
	s, bad := p.judgedBase(ctx)
	if bad != nil {
		return *bad
	}
	content := s.content.scrubbed(p.scrub)
	notes := []string{s.summary()}
	for _, tag := range []string{"<think>", "</think>", "<thinking>", "</thinking>"} {
		if i := strings.Index(content, tag); i >= 0 {
			notes = append(notes, fmt.Sprintf("content: %q", excerpt(nil, []byte(content[i:]))))
			return verdict(Fail, fmt.Sprintf("reasoning arrives as %s text inside the visible text, not in %s", tag, p.w.reasoningWhere), notes...)
		}
	}
	if s.reasoningChunks == 0 {
		return verdict(Skip, fmt.Sprintf("the model did not reason (no %s, no <think> text)", p.w.reasoningWhere), notes...)
	}
	return verdict(Pass, fmt.Sprintf("reasoning arrives in %s (%d chunks), the visible text has no <think> text", s.reasoningField, s.reasoningChunks), notes...)
}

// maxTokensLimit is the limit the max_tokens check sends: far below the
// answer it asks for.
const maxTokensLimit = 5

// longAnswerPrompt asks for an answer far longer than maxTokensLimit
// (also when an echo server repeats it: it is longer than maxTokensLimit
// chunks of 50 characters).
const longAnswerPrompt = "Repeat the word code exactly 200 times, separated by single spaces, with no other text. " +
	"This request checks that the server stops the answer at the token limit the request sets, " +
	"so the answer has to be much longer than that limit; please do not shorten it. "

func (p *prober) checkMaxTokens(ctx context.Context) Verdict {
	if !p.w.streams() {
		return verdict(Skip, "an embeddings answer generates nothing: it has no token limit")
	}
	var notes []string
	var problems []string
	judged := 0
	for i, field := range p.w.limits {
		body := p.body(longAnswerPrompt+"(conformance run "+p.nonce+", "+field+")", 0, map[string]any{field: maxTokensLimit})
		s, err := p.stream(ctx, body, nil)
		if err != nil {
			return verdict(Fail, field+": the streamed request failed: "+err.Error(), notes...)
		}
		notes = append(notes, field+": "+s.summary())
		if s.status != http.StatusOK {
			if i == 0 {
				return verdict(Fail, field+": "+s.failed(), notes...)
			}
			notes = append(notes, field+": not accepted, not judged")
			continue
		}
		tokens, source := s.outputChunks(), "output chunks (no usage), a lower bound"
		if s.usage != nil && s.usage.completion != nil {
			tokens, source = *s.usage.completion, p.w.usageField(1)
		}
		finish := "absent"
		if s.stopReason != nil {
			finish = *s.stopReason
		}
		switch {
		case tokens > maxTokensLimit:
			problems = append(problems, fmt.Sprintf("%s %d: %d tokens by %s, stop reason %s", field, maxTokensLimit, tokens, source, finish))
		case finish == p.w.cutStop:
			judged++
		case finish == "absent":
			judged++
			notes = append(notes, field+": no stop reason to confirm the cut (see finish_reason)")
		case tokens < maxTokensLimit:
			notes = append(notes, fmt.Sprintf("%s: the answer ended on its own after %d tokens (stop reason %q): not judged", field, tokens, finish))
		default:
			problems = append(problems, fmt.Sprintf("%s %d: cut at the limit but %s is %q, want %q", field, maxTokensLimit, p.w.stopWhere, finish, p.w.cutStop))
		}
	}
	switch {
	case len(problems) > 0:
		return verdict(Fail, "the answer is not cut at the limit: "+strings.Join(problems, "; "), notes...)
	case judged == 0:
		return verdict(Skip, "no answer reached the limit, nothing to judge", notes...)
	}
	return verdict(Pass, fmt.Sprintf("cut at %d tokens with stop reason %q (%d of %s)", maxTokensLimit, p.w.cutStop, judged, strings.Join(p.w.limits, ", ")), notes...)
}

// determinismBudget is the max_tokens of the determinism requests.
const determinismBudget = 48

func (p *prober) checkDeterminism(ctx context.Context) Verdict {
	if !p.w.streams() {
		return p.checkEmbeddingsDeterminism(ctx)
	}
	body := p.body("Name three colours of the rainbow, then stop. (conformance run "+p.nonce+")", determinismBudget,
		map[string]any{"temperature": 0})
	var out [2]string
	var notes []string
	for i := range out {
		s, err := p.stream(ctx, body, nil)
		if err != nil {
			return verdict(Fail, "the streamed request failed: "+err.Error(), notes...)
		}
		if why := s.failed(); why != "" {
			return verdict(Fail, why, notes...)
		}
		notes = append(notes, fmt.Sprintf("request %d: %s", i+1, s.summary()))
		// Scrubbed before firstDifference cuts it: a credential across
		// the cut would leave a prefix no later scrub recognises.
		out[i] = s.reasoning.scrubbed(p.scrub) + "\x00" + s.content.scrubbed(p.scrub)
	}
	if out[0] == "\x00" {
		return verdict(Skip, "no output to compare", notes...)
	}
	if out[0] != out[1] {
		return verdict(Skip, "temperature 0 twice gave different outputs: "+firstDifference(out[0], out[1]), notes...)
	}
	return verdict(Pass, fmt.Sprintf("temperature 0 twice gave the same %d bytes of reasoning and content", len(out[0])-1), notes...)
}

// firstDifference shows where a and b diverge, with some context.
func firstDifference(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-20)
	cut := func(s string) string {
		s = s[min(from, len(s)):]
		if len(s) > 60 {
			s = s[:60]
		}
		return strings.ReplaceAll(s, "\x00", "|")
	}
	return fmt.Sprintf("first difference at byte %d (| separates reasoning from content): %q vs %q", i, cut(a), cut(b))
}

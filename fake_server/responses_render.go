package fakeserver

import (
	"math/rand/v2"
	"time"
)

// now is the scheduled time of an event written when it is written, not
// when the engine produced tokens (streamWriter.write).
const now time.Duration = -1

// The response objects and items of a Responses answer, in each layout's
// key order: the reference and Ollama layouts write a streamed object's
// keys in alphabetical order (Ollama marshals maps) and a non-streamed
// body's in its struct's order; llama.cpp writes its own orders.

// response writes the response object of a streamed event: "in_progress"
// ones with no output and no usage, the final one (final) with both.
func (f *responsesFramer) response(o *jsonObj, status string, final bool, u *usage) {
	q := &f.sw.st.req
	if f.llama() {
		o.str("id", f.ids.resp)
		o.str("object", "response")
		if final {
			o.num("created_at", int(f.created))
		}
		o.str("status", status)
		if final {
			o.str("model", f.sw.srv.cfg.Model)
			f.outputItems(o)
			o.obj("usage", func(o *jsonObj) { f.llamaUsage(o, u) })
		}
		return
	}
	o.raw("background", "false")
	if final {
		o.num("completed_at", int(f.clock().Unix()))
	} else {
		o.raw("completed_at", "null")
	}
	o.num("created_at", int(f.created))
	if status == "failed" {
		o.obj("error", func(o *jsonObj) { o.str("code", "server_error"); o.str("message", streamErrorMessage) })
	} else {
		o.raw("error", "null")
	}
	o.num("frequency_penalty", 0)
	o.str("id", f.ids.resp)
	if status == "incomplete" {
		o.obj("incomplete_details", func(o *jsonObj) { o.str("reason", "max_output_tokens") })
	} else {
		o.raw("incomplete_details", "null")
	}
	f.instructions(o)
	o.optNum("max_output_tokens", q.MaxTokens)
	o.raw("max_tool_calls", "null")
	o.raw("metadata", "{}")
	o.str("model", f.sw.srv.cfg.Model)
	o.str("object", "response")
	if final || status == "failed" {
		f.outputItems(o)
	} else {
		o.raw("output", "[]")
	}
	o.raw("parallel_tool_calls", "true")
	o.num("presence_penalty", 0)
	o.raw("previous_response_id", "null")
	o.raw("prompt_cache_key", "null")
	if q.Effort != "" {
		o.obj("reasoning", func(o *jsonObj) { o.str("effort", q.Effort); o.raw("summary", "null") })
	} else {
		o.raw("reasoning", "null")
	}
	o.raw("safety_identifier", "null")
	o.str("service_tier", "default")
	if !final || !f.sw.d.OmitFinishReason {
		o.str("status", status)
	}
	o.raw("store", "false")
	o.float("temperature", deref(q.Temperature, 1))
	o.obj("text", func(o *jsonObj) { o.obj("format", func(o *jsonObj) { o.str("type", "text") }) })
	o.str("tool_choice", "auto")
	o.raw("tools", "[]")
	o.num("top_logprobs", 0)
	o.float("top_p", deref(q.TopP, 1))
	o.str("truncation", "disabled")
	if final && f.sw.d.Usage != usageNone {
		o.obj("usage", func(o *jsonObj) {
			o.num("input_tokens", u.Prompt)
			if !f.sw.d.OmitCachedTokens || f.sw.d.Layout != layoutReference {
				o.obj("input_tokens_details", func(o *jsonObj) { o.num("cached_tokens", f.cached(u)) })
			}
			o.num("output_tokens", u.Completion)
			o.obj("output_tokens_details", func(o *jsonObj) { o.num("reasoning_tokens", f.reasoningTokens(u)) })
			o.num("total_tokens", f.total(u))
		})
	} else {
		o.raw("usage", "null")
	}
}

// bodyResponse writes the response object of a non-streamed answer.
func (f *responsesFramer) bodyResponse(o *jsonObj, status string, u *usage) {
	q := &f.sw.st.req
	completed := int(f.clock().Unix())
	if f.llama() {
		o.num("completed_at", completed)
		o.num("created_at", int(f.created))
		o.str("id", f.ids.resp)
		o.str("model", f.sw.srv.cfg.Model)
		o.str("object", "response")
		f.outputItems(o)
		o.str("status", status)
		o.obj("usage", func(o *jsonObj) { f.llamaUsage(o, u) })
		return
	}
	o.str("id", f.ids.resp)
	o.str("object", "response")
	o.num("created_at", int(f.created))
	o.num("completed_at", completed)
	o.str("status", status)
	if status == "incomplete" {
		o.obj("incomplete_details", func(o *jsonObj) { o.str("reason", "max_output_tokens") })
	} else {
		o.raw("incomplete_details", "null")
	}
	o.str("model", f.sw.srv.cfg.Model)
	o.raw("previous_response_id", "null")
	f.instructions(o)
	f.outputItems(o)
	o.raw("error", "null")
	o.raw("tools", "[]")
	o.str("tool_choice", "auto")
	o.str("truncation", "disabled")
	o.raw("parallel_tool_calls", "true")
	o.obj("text", func(o *jsonObj) { o.obj("format", func(o *jsonObj) { o.str("type", "text") }) })
	o.float("top_p", deref(q.TopP, 1))
	o.num("presence_penalty", 0)
	o.num("frequency_penalty", 0)
	o.num("top_logprobs", 0)
	o.float("temperature", deref(q.Temperature, 1))
	if q.Effort != "" {
		o.obj("reasoning", func(o *jsonObj) { o.str("effort", q.Effort) })
	} else {
		o.raw("reasoning", "null")
	}
	o.obj("usage", func(o *jsonObj) {
		o.num("input_tokens", u.Prompt)
		o.num("output_tokens", u.Completion)
		o.num("total_tokens", f.total(u))
		o.obj("input_tokens_details", func(o *jsonObj) { o.num("cached_tokens", f.cached(u)) })
		o.obj("output_tokens_details", func(o *jsonObj) { o.num("reasoning_tokens", f.reasoningTokens(u)) })
	})
	o.optNum("max_output_tokens", q.MaxTokens)
	o.raw("max_tool_calls", "null")
	o.raw("store", "false")
	o.raw("background", "false")
	o.str("service_tier", "default")
	o.raw("metadata", "{}")
	o.raw("safety_identifier", "null")
	o.raw("prompt_cache_key", "null")
}

// instructions writes the instructions the request gave, or null.
func (f *responsesFramer) instructions(o *jsonObj) {
	if in := f.sw.st.req.Instructions; in != nil && *in != "" {
		o.str("instructions", *in)
		return
	}
	o.raw("instructions", "null")
}

// outputItems writes the answer's items: the reasoning item, then the
// message.
func (f *responsesFramer) outputItems(o *jsonObj) {
	var items []func(o *jsonObj)
	if f.reasoningStarted {
		items = append(items, func(o *jsonObj) { f.reasoningItem(o, true) })
	}
	if f.contentStarted || (f.sw.d.Layout == layoutOllama && f.body) {
		text := f.text.String()
		items = append(items, func(o *jsonObj) { f.messageItem(o, text) })
	}
	o.objs("output", items...)
}

// reasoningItem writes the done reasoning item; final says it is one of a
// response object's output (llama.cpp's non-streamed body adds a status).
func (f *responsesFramer) reasoningItem(o *jsonObj, final bool) {
	text := f.reasoning.String()
	switch {
	case f.llama():
		o.str("id", f.ids.rs)
		o.raw("summary", "[]")
		o.str("type", "reasoning")
		o.objs("content", func(o *jsonObj) { o.str("text", text); o.str("type", "reasoning_text") })
		o.str("encrypted_content", "")
		if final && f.body {
			o.str("status", "completed")
		}
	case f.body:
		o.str("id", "rs_"+f.ids.resp)
		o.str("type", "reasoning")
		if f.sw.d.Layout == layoutOllama {
			o.objs("summary", func(o *jsonObj) { o.str("type", "summary_text"); o.str("text", text) })
			o.str("encrypted_content", text)
			return
		}
		o.raw("summary", "[]")
		o.objs("content", func(o *jsonObj) { o.str("type", "reasoning_text"); o.str("text", text) })
	case f.sw.d.Layout == layoutOllama:
		o.str("encrypted_content", text)
		o.str("id", f.ids.rs)
		o.objs("summary", func(o *jsonObj) { o.str("text", text); o.str("type", "summary_text") })
		o.str("type", "reasoning")
	default:
		o.objs("content", func(o *jsonObj) { o.str("text", text); o.str("type", "reasoning_text") })
		o.str("id", f.ids.rs)
		o.raw("summary", "[]")
		o.str("type", "reasoning")
	}
}

// messageItem writes the done message item holding text.
func (f *responsesFramer) messageItem(o *jsonObj, text string) {
	switch {
	case f.llama() && f.body:
		o.objs("content", func(o *jsonObj) { f.textPart(o, text) })
		o.str("id", f.ids.msg)
		o.str("role", "assistant")
		o.str("status", "completed")
		o.str("type", "message")
	case f.llama():
		o.str("type", "message")
		o.str("status", "completed")
		o.str("id", f.ids.msg)
		o.objs("content", func(o *jsonObj) { f.textPart(o, text) })
		o.str("role", "assistant")
	case f.body:
		o.str("id", f.ids.msg)
		o.str("type", "message")
		o.str("status", "completed")
		o.str("role", "assistant")
		o.objs("content", func(o *jsonObj) {
			o.str("type", "output_text")
			o.str("text", text)
			o.raw("annotations", "[]")
			o.raw("logprobs", "[]")
		})
	default:
		o.objs("content", func(o *jsonObj) { f.textPart(o, text) })
		o.str("id", f.ids.msg)
		o.str("role", "assistant")
		o.str("status", "completed")
		o.str("type", "message")
	}
}

// textPart writes an output_text part holding text.
func (f *responsesFramer) textPart(o *jsonObj, text string) {
	if f.llama() {
		o.str("type", "output_text")
		o.raw("annotations", "[]")
		o.raw("logprobs", "[]")
		o.str("text", text)
		return
	}
	o.raw("annotations", "[]")
	o.raw("logprobs", "[]")
	o.str("text", text)
	o.str("type", "output_text")
}

// llamaUsage writes llama.cpp's usage object.
func (f *responsesFramer) llamaUsage(o *jsonObj, u *usage) {
	o.num("input_tokens", u.Prompt)
	o.num("output_tokens", u.Completion)
	o.num("total_tokens", f.total(u))
	o.obj("input_tokens_details", func(o *jsonObj) { o.num("cached_tokens", f.cached(u)) })
}

// cached is the cached_tokens the layout reports: Ollama's always 0, and
// 0 too with Dialect.OmitCachedTokens.
func (f *responsesFramer) cached(u *usage) int {
	if f.sw.d.Layout == layoutOllama || f.sw.d.OmitCachedTokens {
		return 0
	}
	return u.Cached
}

// reasoningTokens is the reasoning_tokens the layout reports: Ollama's
// always 0.
func (f *responsesFramer) reasoningTokens(u *usage) int {
	if f.sw.d.Layout == layoutOllama {
		return 0
	}
	return u.Reasoning
}

// total is total_tokens: input alone under the usage_total_mismatch fault.
func (f *responsesFramer) total(u *usage) int {
	if u.BadTotal {
		return u.Prompt
	}
	return u.Prompt + u.Completion
}

// llamaCppTimings renders llama.cpp's "timings" object from the engine's
// bookkeeping: the uncached prompt tokens and the prefill's duration, the
// output tokens and the decode's.
func llamaCppTimings(sw *streamWriter) []byte {
	tr := sw.st.tr
	sq := sw.sq
	sq.mu.Lock()
	cached, queued, prefilled := sq.cached, sq.queued, sq.prefillDone
	sq.mu.Unlock()
	promptN, predictedN := tr.PromptTokens-cached, tr.CompletionTokens
	promptMS := float64(prefilled-queued) / float64(time.Millisecond)
	predictedMS := float64(time.Since(sw.st.arrived)-prefilled) / float64(time.Millisecond)
	return sw.rend.object(func(o *jsonObj) {
		o.num("cache_n", cached)
		o.num("prompt_n", promptN)
		o.float("prompt_ms", promptMS)
		o.float("prompt_per_token_ms", perToken(promptMS, promptN))
		o.float("prompt_per_second", perSecond(promptMS, promptN))
		o.num("predicted_n", predictedN)
		o.float("predicted_ms", predictedMS)
		o.float("predicted_per_token_ms", perToken(predictedMS, predictedN))
		o.float("predicted_per_second", perSecond(predictedMS, predictedN))
	})
}

func perToken(ms float64, n int) float64 {
	if n == 0 {
		return 0
	}
	return ms / float64(n)
}

func perSecond(ms float64, n int) float64 {
	if ms <= 0 {
		return 0
	}
	return 1e3 * float64(n) / ms
}

// deref is *p, or def when p is nil.
func deref(p *float64, def float64) float64 {
	if p == nil {
		return def
	}
	return *p
}

// alnumChars are the characters of llama.cpp's random ids.
const alnumChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// alnum draws n characters of alnumChars.
func alnum(rng *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alnumChars[rng.IntN(len(alnumChars))]
	}
	return string(b)
}

// llamaCppError renders e as llama.cpp writes errors:
// {"error":{"code":N,"message":...,"type":...}}.
func llamaCppError(e *apiError) []byte {
	r := newRenderer(&Dialect{})
	return r.object(func(o *jsonObj) {
		o.obj("error", func(o *jsonObj) {
			o.num("code", e.status)
			o.str("message", e.message)
			o.str("type", e.typ)
		})
	})
}

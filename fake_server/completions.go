package fakeserver

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// completionsAPI is POST /v1/completions, the legacy text completions,
// laid out as Dialect.Layout says. A raw prompt has no chat template: no
// Config.TemplateTokens are added and there is no reasoning.
type completionsAPI struct{}

func (completionsAPI) name() string                  { return "completions" }
func (completionsAPI) path() string                  { return "/v1/completions" }
func (completionsAPI) contentType(d *Dialect) string { return d.contentType() }

func (completionsAPI) errorBody(d *Dialect, e *apiError) []byte {
	if d.Layout == layoutLlamaCpp {
		return llamaCppError(e)
	}
	return openAIError(e)
}

// defaultCompletionTokens is the max_tokens of a completions request
// without one: 16, OpenAI's and vLLM's default.
const defaultCompletionTokens = 16

// completionsRequest is the part of a completions request the fake reads.
type completionsRequest struct {
	Model         string          `json:"model"`
	Prompt        json.RawMessage `json:"prompt"`
	Stream        bool            `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens   *int     `json:"max_tokens"`
	Temperature *float64 `json:"temperature"`
	IgnoreEOS   bool     `json:"ignore_eos"`
}

func (completionsAPI) parse(body []byte) (request, *apiError) {
	var c completionsRequest
	if bad := decodeBody(body, &c); bad != nil {
		return request{}, bad
	}
	var prompt string
	if err := json.Unmarshal(c.Prompt, &prompt); err != nil {
		var batch []string
		if json.Unmarshal(c.Prompt, &batch) != nil || len(batch) != 1 {
			return request{}, invalid("prompt", "prompt: want a string (or an array of one string: the fake answers one prompt per request)")
		}
		prompt = batch[0]
	}
	mt := c.MaxTokens
	if mt == nil {
		n := defaultCompletionTokens
		mt = &n
	}
	return request{Model: c.Model, Messages: []message{{Role: "user", Content: mustJSON(prompt)}}, PromptField: "prompt",
		Stream: c.Stream, IncludeUsage: c.StreamOptions != nil && c.StreamOptions.IncludeUsage, Temperature: c.Temperature,
		MaxTokens: mt, MaxField: "max_tokens", IgnoreEOS: c.IgnoreEOS, Raw: true}, nil
}

func (completionsAPI) framer(sw *streamWriter) framer { return newCompletionsFramer(sw) }

func newCompletionsFramer(sw *streamWriter) *completionsFramer {
	rng := sw.srv.ids(sw.st)
	f := &completionsFramer{sw: sw, created: sw.st.arrived.Unix(), timings: func() []byte { return llamaCppTimings(sw) }}
	switch sw.d.Layout {
	case layoutLlamaCpp:
		f.id = "chatcmpl-" + alnum(rng, 32)
	case layoutOllama:
		f.id = "cmpl-" + strconv.Itoa(rng.IntN(999))
	default:
		f.id = fmt.Sprintf("cmpl-%016x", rng.Uint64())
	}
	return f
}

// completionsFramer writes the text_completion chunks of a stream.
type completionsFramer struct {
	sw      *streamWriter
	id      string
	created int64
	timings func() []byte // llama.cpp's "timings" object
}

// chunk renders one text_completion object: choices (nil for []), and the
// usage u when not nil; final marks llama.cpp's last chunk, which carries
// its timings.
func (f *completionsFramer) chunk(text string, finish string, u *usage, usageChunk, final bool) []byte {
	d := f.sw.d
	model := f.sw.srv.cfg.Model
	choice := func(o *jsonObj) {
		switch d.Layout {
		case layoutLlamaCpp:
			o.str("text", text)
			o.num("index", 0)
			o.raw("logprobs", "null")
		case layoutOllama:
			o.str("text", text)
			o.num("index", 0)
		default:
			o.num("index", 0)
			o.str("text", text)
			if d.NullLogprobs {
				o.raw("logprobs", "null")
			}
		}
		if d.OmitFinishReason && d.Layout == layoutReference {
			return
		}
		if finish == "" {
			o.raw("finish_reason", "null")
			return
		}
		o.str("finish_reason", finish)
		if d.StopReason && d.Layout == layoutReference {
			o.raw("stop_reason", "null")
		}
	}
	choices := func(o *jsonObj) {
		if usageChunk {
			o.raw("choices", "[]")
			return
		}
		o.objs("choices", choice)
	}
	return f.sw.rend.object(func(o *jsonObj) {
		switch d.Layout {
		case layoutLlamaCpp:
			choices(o)
			o.num("created", int(f.created))
			o.str("model", model)
			o.str("system_fingerprint", d.SystemFingerprint)
			o.str("object", "text_completion")
			if u != nil {
				o.obj("usage", func(o *jsonObj) { f.usage(o, u) })
			}
			o.str("id", f.id)
			if final {
				o.raw("timings", string(f.timings()))
			}
		case layoutOllama:
			o.str("id", f.id)
			o.str("object", "text_completion")
			o.num("created", int(f.created))
			choices(o)
			o.str("model", model)
			o.str("system_fingerprint", d.SystemFingerprint)
			if u != nil {
				o.obj("usage", func(o *jsonObj) { f.usage(o, u) })
			}
		default:
			o.str("id", f.id)
			o.str("object", "text_completion")
			o.num("created", int(f.created))
			o.str("model", model)
			if d.SystemFingerprint != "" {
				o.str("system_fingerprint", d.SystemFingerprint)
			}
			choices(o)
			if u != nil {
				o.obj("usage", func(o *jsonObj) { f.usage(o, u) })
			}
		}
	})
}

// usage writes a usage object in the layout's order.
func (f *completionsFramer) usage(o *jsonObj, u *usage) {
	d := f.sw.d
	total := u.Prompt + u.Completion
	if u.BadTotal {
		total = u.Prompt
	}
	if d.Layout == layoutLlamaCpp {
		o.num("completion_tokens", u.Completion)
		o.num("prompt_tokens", u.Prompt)
		o.num("total_tokens", total)
	} else {
		o.num("prompt_tokens", u.Prompt)
		o.num("completion_tokens", u.Completion)
		o.num("total_tokens", total)
	}
	if d.Layout != layoutOllama && !d.OmitCachedTokens {
		o.obj("prompt_tokens_details", func(o *jsonObj) { o.num("cached_tokens", u.Cached) })
	}
}

// zeros is the usage Ollama writes on every chunk before the usage chunk.
var zeros = usage{}

// placeholder is the usage of a chunk before the last: Ollama's zeros
// when usage was asked for, none otherwise.
func (f *completionsFramer) placeholder() *usage {
	if f.sw.d.Layout == layoutOllama && f.sw.st.tr.IncludeUsage {
		z := zeros
		return &z
	}
	return nil
}

func (f *completionsFramer) write(kind string, tokens int, at time.Duration, data []byte) bool {
	return f.sw.event(kind, tokens, at, f.sw.d.EventName, data)
}

func (f *completionsFramer) begin(*group) bool { return true }

func (f *completionsFramer) output(g *group, last bool) bool {
	d := f.sw.d
	if last && d.Layout == layoutReference && !d.FinishChunk {
		var u *usage
		if f.sw.st.tr.IncludeUsage && d.Usage == usageLastChoice {
			u = f.sw.usage()
		}
		return f.write(chunkContent, g.tokens, g.at, f.chunk(g.text, f.sw.plan.finish, u, false, false))
	}
	return f.write(chunkContent, g.tokens, g.at, f.chunk(g.text, "", f.placeholder(), false, false))
}

func (f *completionsFramer) end() bool {
	d := f.sw.d
	u := f.sw.usage()
	switch d.Layout {
	case layoutLlamaCpp:
		// Usage and timings on the finish chunk, asked for or not.
		return f.write(chunkFinish, 0, now, f.chunk("", f.sw.plan.finish, u, false, true)) && f.done()
	case layoutOllama:
		if !f.write(chunkFinish, 0, now, f.chunk("", f.sw.plan.finish, f.placeholder(), false, false)) {
			return false
		}
		if f.sw.st.tr.IncludeUsage && !f.write(chunkUsage, 0, now, f.chunk("", "", u, true, false)) {
			return false
		}
		return f.done()
	}
	includeUsage := f.sw.st.tr.IncludeUsage && d.Usage != usageNone
	if d.FinishChunk {
		var fu *usage
		if includeUsage && d.Usage == usageLastChoice {
			fu = u
		}
		if !f.write(chunkFinish, 0, now, f.chunk("", f.sw.plan.finish, fu, false, false)) {
			return false
		}
	}
	if includeUsage && d.Usage == usageFinal && !f.write(chunkUsage, 0, now, f.chunk("", "", u, true, false)) {
		return false
	}
	return d.OmitDone || f.done()
}

// done writes the terminal data: [DONE].
func (f *completionsFramer) done() bool {
	return f.write(chunkDone, 0, now, []byte("[DONE]"))
}

func (f *completionsFramer) keepAlive() bool {
	return f.sw.write(chunkComment, 0, now, f.sw.rend.comment("keep-alive"))
}

func (f *completionsFramer) streamError() bool {
	if f.sw.d.Layout == layoutLlamaCpp {
		return f.write(chunkError, 0, now, llamaCppError(&apiError{status: 500, message: streamErrorMessage, typ: "server_error"}))
	}
	return f.write(chunkError, 0, now, []byte(streamErrorBody)) && (f.sw.d.OmitDone || f.done())
}

func (f *completionsFramer) malformed() bool {
	b := f.chunk("x", "", nil, false, false)
	return f.write(chunkMalformed, 0, now, b[:len(b)/2])
}

func (f *completionsFramer) oversized(text string) bool {
	return f.write(chunkOversized, 0, now, f.chunk(text, "", nil, false, false))
}

func (completionsAPI) body(sw *streamWriter, a *answer) []byte {
	return newCompletionsFramer(sw).answerBody(a)
}

// answerBody renders a non-streamed answer.
func (f *completionsFramer) answerBody(a *answer) []byte {
	d := f.sw.d
	text := a.reasoning + a.content
	model := f.sw.srv.cfg.Model
	var u *usage
	if d.Layout != layoutReference || d.Usage != usageNone {
		u = &a.usage
	}
	switch d.Layout {
	case layoutLlamaCpp:
		return f.chunk(text, a.finish, u, false, true)
	case layoutOllama:
		return append(f.sw.rend.object(func(o *jsonObj) {
			o.str("id", f.id)
			o.str("object", "text_completion")
			o.num("created", int(f.created))
			o.str("model", model)
			o.str("system_fingerprint", d.SystemFingerprint)
			o.objs("choices", func(o *jsonObj) {
				o.str("text", text)
				o.num("index", 0)
				o.str("finish_reason", a.finish)
			})
			o.obj("usage", func(o *jsonObj) { f.usage(o, u) })
		}), '\n')
	}
	return append(f.chunk(text, a.finish, u, false, false), '\n')
}

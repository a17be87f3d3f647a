package fakeserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// messagesAPI is POST /v1/messages, Anthropic's Messages API, laid out as
// Dialect.Layout says.
type messagesAPI struct{}

func (messagesAPI) name() string                  { return "messages" }
func (messagesAPI) path() string                  { return "/v1/messages" }
func (messagesAPI) contentType(d *Dialect) string { return d.contentType() }

// anthropicErrorType is the error type Anthropic (and Ollama's
// compatibility layer) gives an HTTP status.
func anthropicErrorType(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusServiceUnavailable, 529:
		return "overloaded_error"
	}
	return "api_error"
}

func (messagesAPI) errorBody(d *Dialect, e *apiError) []byte {
	if d.Layout == layoutLlamaCpp {
		return llamaCppError(e)
	}
	r := newRenderer(d)
	return append(r.object(func(o *jsonObj) {
		o.str("type", "error")
		o.obj("error", func(o *jsonObj) {
			o.str("type", anthropicErrorType(e.status))
			o.str("message", e.message)
		})
		if d.Layout == layoutOllama {
			o.str("request_id", "req_"+fmt.Sprintf("%024x", hashString(e.message)))
		}
	}), '\n')
}

// messagesRequest is the part of a Messages request the fake reads.
type messagesRequest struct {
	Model       string          `json:"model"`
	MaxTokens   *int            `json:"max_tokens"`
	Messages    []message       `json:"messages"`
	System      json.RawMessage `json:"system"`
	Stream      bool            `json:"stream"`
	Temperature *float64        `json:"temperature"`
	TopP        *float64        `json:"top_p"`
	Thinking    *struct {
		Type string `json:"type"`
	} `json:"thinking"`
}

func (messagesAPI) parse(body []byte) (request, *apiError) {
	var m messagesRequest
	if bad := decodeBody(body, &m); bad != nil {
		return request{}, bad
	}
	if m.MaxTokens == nil {
		return request{}, invalid("max_tokens", "max_tokens: Field required")
	}
	if len(m.Messages) == 0 {
		return request{}, invalid("messages", "messages: want a non-empty array")
	}
	q := request{Model: m.Model, PromptField: "messages", Stream: m.Stream, IncludeUsage: true, Temperature: m.Temperature,
		TopP: m.TopP, MaxTokens: m.MaxTokens, MaxField: "max_tokens", NoThinking: m.Thinking != nil && m.Thinking.Type == "disabled"}
	// Ollama's estimate of the input tokens: a quarter of the characters
	// of the system text and of every message's role and text.
	chars := 0
	if len(m.System) > 0 && string(m.System) != "null" {
		system, err := textOf(m.System)
		if err != nil {
			return request{}, invalid("system", "system: want a string or an array of text blocks")
		}
		chars += len(system)
		q.Messages = append(q.Messages, message{Role: "system", Content: mustJSON(system)})
	}
	for _, msg := range m.Messages {
		t, err := msg.text()
		if err == nil {
			chars += len(msg.Role) + len(t)
		}
		q.Messages = append(q.Messages, msg)
	}
	q.Estimate = max(chars/4, 1)
	return q, nil
}

// stopReason is Anthropic's name of a finish reason.
func stopReason(finish string) string {
	if finish == "length" {
		return "max_tokens"
	}
	return "end_turn"
}

// messagesID draws the id of st's message in the layout's format.
func messagesID(sw *streamWriter) string {
	rng := sw.srv.ids(sw.st)
	switch sw.d.Layout {
	case layoutLlamaCpp:
		return "chatcmpl-" + alnum(rng, 32)
	case layoutOllama:
		return fmt.Sprintf("msg_%016x%08x", rng.Uint64(), rng.Uint32())
	}
	return "msg_" + alnum(rng, 24)
}

func (messagesAPI) framer(sw *streamWriter) framer { return newMessagesFramer(sw) }

func newMessagesFramer(sw *streamWriter) *messagesFramer {
	return &messagesFramer{sw: sw, id: messagesID(sw), block: -1}
}

// messagesFramer writes the events of a Messages stream.
type messagesFramer struct {
	sw    *streamWriter
	id    string
	block int       // the index of the open content block, -1 before the first
	kind  tokenKind // the open block's kind
	open  bool      // a content block is open
	// thinking: Dialect.ThinkTags sent "<think>" in a text block,
	// "</think>" not yet.
	thinking bool
}

// emit writes one event named typ whose data f writes after its "type".
func (f *messagesFramer) emit(kind string, tokens int, at time.Duration, typ string, members func(o *jsonObj)) bool {
	data := f.sw.rend.object(func(o *jsonObj) {
		o.str("type", typ)
		if members != nil {
			members(o)
		}
	})
	return f.sw.event(kind, tokens, at, typ, data)
}

func (f *messagesFramer) begin(g *group) bool {
	ok := f.emit(chunkFraming, 0, g.at, "message_start", func(o *jsonObj) {
		o.obj("message", func(o *jsonObj) { f.message(o, nil, "", true) })
	})
	if ok && f.sw.d.Layout == layoutReference {
		ok = f.ping(g.at)
	}
	return ok
}

// message writes the message object: message_start's (start, without
// content or stop reason) or a non-streamed body's.
func (f *messagesFramer) message(o *jsonObj, content []func(o *jsonObj), stop string, start bool) {
	d := f.sw.d
	tr := f.sw.st.tr
	model := f.sw.srv.cfg.Model
	o.str("id", f.id)
	o.str("type", "message")
	o.str("role", "assistant")
	if d.Layout == layoutOllama {
		o.str("model", model)
		o.objs("content", content...)
		if !start {
			o.str("stop_reason", stop)
		}
	} else {
		o.objs("content", content...)
		o.str("model", model)
		if start {
			o.raw("stop_reason", "null")
		} else {
			o.str("stop_reason", stop)
		}
		o.raw("stop_sequence", "null")
	}
	out := tr.CompletionTokens
	if start {
		out = 0
	}
	if d.Usage != usageNone || d.Layout != layoutReference {
		o.obj("usage", func(o *jsonObj) { f.inputUsage(o, start, out) })
	}
}

// inputUsage writes a message's usage: its input counts and out output
// tokens.
func (f *messagesFramer) inputUsage(o *jsonObj, start bool, out int) {
	d := f.sw.d
	prompt, cached := f.sw.st.tr.PromptTokens, f.sw.sq.cachedTokens()
	if d.OmitCachedTokens || d.Layout == layoutOllama {
		cached = 0
	}
	switch {
	case d.Layout == layoutOllama:
		in := prompt
		if start {
			in = f.sw.st.req.Estimate
		}
		o.num("input_tokens", in)
	case d.Layout == layoutLlamaCpp:
		o.num("cache_read_input_tokens", cached)
		o.num("input_tokens", prompt-cached)
	case d.OmitCachedTokens:
		o.num("input_tokens", prompt)
	default:
		o.num("input_tokens", prompt-cached)
		o.num("cache_creation_input_tokens", 0)
		o.num("cache_read_input_tokens", cached)
	}
	o.num("output_tokens", out)
}

func (f *messagesFramer) output(g *group, _ bool) bool {
	k, text, kind := g.kind, g.text, chunkContent
	if g.kind == kindReasoning {
		kind = chunkReasoning
	}
	if f.sw.d.ThinkTags {
		k = kindContent
		text, kind = f.sw.thinkTagged(g, &f.thinking)
	}
	if !f.open || f.kind != k {
		if !f.closeBlock(g.at) || !f.openBlock(g.at, k) {
			return false
		}
	}
	return f.delta(kind, g.tokens, g.at, k, text)
}

// openBlock opens the next content block, of kind k.
func (f *messagesFramer) openBlock(at time.Duration, k tokenKind) bool {
	f.block++
	f.kind, f.open = k, true
	return f.emit(chunkFraming, 0, at, "content_block_start", func(o *jsonObj) {
		o.num("index", f.block)
		o.obj("content_block", func(o *jsonObj) {
			if k == kindReasoning {
				o.str("type", "thinking")
				o.str("thinking", "")
				return
			}
			o.str("type", "text")
			o.str("text", "")
		})
	})
}

// delta writes one content_block_delta of the open block.
func (f *messagesFramer) delta(kind string, tokens int, at time.Duration, k tokenKind, text string) bool {
	return f.emit(kind, tokens, at, "content_block_delta", func(o *jsonObj) {
		o.num("index", f.block)
		o.obj("delta", func(o *jsonObj) {
			if k == kindReasoning {
				o.str("type", "thinking_delta")
				o.str("thinking", text)
				return
			}
			o.str("type", "text_delta")
			o.str("text", text)
		})
	})
}

// closeBlock closes the open content block, if any: a thinking block with
// its signature first (empty from llama.cpp, none from Ollama).
func (f *messagesFramer) closeBlock(at time.Duration) bool {
	if !f.open {
		return true
	}
	f.open = false
	if f.kind == kindReasoning && f.sw.d.Layout != layoutOllama {
		sig := ""
		if f.sw.d.Layout == layoutReference {
			sig = "fake-signature"
		}
		ok := f.emit(chunkFraming, 0, at, "content_block_delta", func(o *jsonObj) {
			o.num("index", f.block)
			o.obj("delta", func(o *jsonObj) { o.str("type", "signature_delta"); o.str("signature", sig) })
		})
		if !ok {
			return false
		}
	}
	return f.emit(chunkFraming, 0, at, "content_block_stop", func(o *jsonObj) { o.num("index", f.block) })
}

func (f *messagesFramer) end() bool {
	if !f.closeBlock(now) {
		return false
	}
	d := f.sw.d
	stop := stopReason(f.sw.plan.finish)
	ok := f.emit(chunkUsage, 0, now, "message_delta", func(o *jsonObj) {
		o.obj("delta", func(o *jsonObj) {
			if d.OmitFinishReason && d.Layout == layoutReference {
				o.raw("stop_reason", "null")
			} else {
				o.str("stop_reason", stop)
			}
			if d.Layout != layoutOllama {
				o.raw("stop_sequence", "null")
			}
		})
		if d.Usage == usageNone && d.Layout == layoutReference {
			return
		}
		o.obj("usage", func(o *jsonObj) {
			if d.Layout == layoutOllama {
				o.num("input_tokens", f.sw.st.tr.PromptTokens)
			}
			o.num("output_tokens", f.sw.st.tr.CompletionTokens)
		})
	})
	if !ok || d.OmitDone {
		return ok
	}
	return f.emit(chunkDone, 0, now, "message_stop", nil)
}

// ping writes a ping event: activity, not output.
func (f *messagesFramer) ping(at time.Duration) bool {
	return f.emit(chunkPing, 0, at, "ping", nil)
}

func (f *messagesFramer) keepAlive() bool { return f.ping(now) }

// streamError ends the stream with an error event: Anthropic's
// {"type":"error","error":{...}}, or llama.cpp's OpenAI-shaped members.
func (f *messagesFramer) streamError() bool {
	e := &apiError{status: http.StatusInternalServerError, message: streamErrorMessage, typ: "server_error"}
	if f.sw.d.Layout == layoutLlamaCpp {
		data := f.sw.rend.object(func(o *jsonObj) {
			o.num("code", e.status)
			o.str("message", e.message)
			o.str("type", e.typ)
		})
		return f.sw.event(chunkError, 0, now, "error", data)
	}
	return f.emit(chunkError, 0, now, "error", func(o *jsonObj) {
		o.obj("error", func(o *jsonObj) { o.str("type", "api_error"); o.str("message", e.message) })
	})
}

func (f *messagesFramer) malformed() bool {
	b := f.sw.rend.object(func(o *jsonObj) {
		o.str("type", "content_block_delta")
		o.num("index", max(f.block, 0))
		o.obj("delta", func(o *jsonObj) { o.str("type", "text_delta"); o.str("text", "x") })
	})
	return f.sw.event(chunkMalformed, 0, now, "content_block_delta", b[:len(b)/2])
}

func (f *messagesFramer) oversized(text string) bool {
	if !f.open || f.kind != kindContent {
		if !f.closeBlock(now) || !f.openBlock(now, kindContent) {
			return false
		}
	}
	return f.delta(chunkOversized, 0, now, kindContent, text)
}

func (messagesAPI) body(sw *streamWriter, a *answer) []byte {
	return newMessagesFramer(sw).answerBody(a)
}

// answerBody renders a non-streamed answer.
func (f *messagesFramer) answerBody(a *answer) []byte {
	d := f.sw.d
	var content []func(o *jsonObj)
	if a.reasoning != "" {
		content = append(content, func(o *jsonObj) {
			o.str("type", "thinking")
			o.str("thinking", a.reasoning)
			if d.Layout != layoutOllama {
				o.str("signature", "")
			}
		})
	}
	if a.content != "" || a.reasoning == "" {
		content = append(content, func(o *jsonObj) { o.str("type", "text"); o.str("text", a.content) })
	}
	b := f.sw.rend.object(func(o *jsonObj) { f.message(o, content, stopReason(a.finish), false) })
	if d.Layout == layoutLlamaCpp {
		return b
	}
	return append(b, '\n')
}

package fakeserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// responsesAPI is POST /v1/responses, OpenAI's Responses API, laid out as
// Dialect.Layout says.
type responsesAPI struct{}

func (responsesAPI) name() string                  { return "responses" }
func (responsesAPI) path() string                  { return "/v1/responses" }
func (responsesAPI) contentType(d *Dialect) string { return d.contentType() }

func (responsesAPI) errorBody(d *Dialect, e *apiError) []byte {
	switch d.Layout {
	case layoutLlamaCpp:
		return llamaCppError(e)
	case layoutOllama:
		// Ollama's OpenAI-compatible writer types every error it is
		// handed as api_error.
		if e.status != http.StatusBadRequest {
			e = &apiError{status: e.status, message: e.message, typ: "api_error"}
		}
	}
	return openAIError(e)
}

// responsesRequest is the part of a Responses request the fake reads.
type responsesRequest struct {
	Model           string          `json:"model"`
	Input           json.RawMessage `json:"input"`
	Instructions    *string         `json:"instructions"`
	Stream          bool            `json:"stream"`
	MaxOutputTokens *int            `json:"max_output_tokens"`
	Temperature     *float64        `json:"temperature"`
	TopP            *float64        `json:"top_p"`
	Reasoning       *struct {
		Effort string `json:"effort"`
	} `json:"reasoning"`
	IgnoreEOS bool `json:"ignore_eos"`
}

func (responsesAPI) parse(body []byte) (request, *apiError) {
	var r responsesRequest
	if bad := decodeBody(body, &r); bad != nil {
		return request{}, bad
	}
	q := request{Model: r.Model, PromptField: "input", Stream: r.Stream, IncludeUsage: true, Temperature: r.Temperature,
		TopP: r.TopP, MaxTokens: r.MaxOutputTokens, MaxField: "max_output_tokens", IgnoreEOS: r.IgnoreEOS,
		Instructions: r.Instructions}
	if r.Reasoning != nil {
		q.Effort = r.Reasoning.Effort
		q.NoThinking = r.Reasoning.Effort == "none"
	}
	if r.Instructions != nil && *r.Instructions != "" {
		q.Messages = append(q.Messages, message{Role: "system", Content: mustJSON(*r.Instructions)})
	}
	var text string
	if err := json.Unmarshal(r.Input, &text); err == nil {
		q.Messages = append(q.Messages, message{Role: "user", Content: r.Input})
		return q, nil
	}
	var items []struct {
		Type    string          `json:"type"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(r.Input, &items); err != nil || len(items) == 0 {
		return request{}, invalid("input", "input: want a string or a non-empty array of messages")
	}
	for i, it := range items {
		if it.Type != "" && it.Type != "message" {
			return request{}, invalid("input", fmt.Sprintf("input[%d].type = %q: the fake reads only messages", i, it.Type))
		}
		q.Messages = append(q.Messages, message{Role: it.Role, Content: it.Content})
	}
	return q, nil
}

// mustJSON is the JSON text of a string.
func mustJSON(s string) json.RawMessage {
	b, _ := json.Marshal(s) // a string always marshals
	return b
}

// responsesIDs are the ids of one Responses answer.
type responsesIDs struct {
	resp, msg, rs string
}

// newResponsesIDs draws the ids of st's answer in the layout's format.
func newResponsesIDs(sw *streamWriter) responsesIDs {
	rng := sw.srv.ids(sw.st)
	if sw.d.Layout == layoutLlamaCpp {
		return responsesIDs{resp: "resp_" + alnum(rng, 32), msg: "msg_" + alnum(rng, 32), rs: "rs_" + alnum(rng, 32)}
	}
	return responsesIDs{resp: fmt.Sprintf("resp_%d", rng.IntN(999999)), msg: fmt.Sprintf("msg_%d", rng.IntN(999999)),
		rs: fmt.Sprintf("rs_%d", rng.IntN(999999))}
}

func (responsesAPI) framer(sw *streamWriter) framer { return newResponsesFramer(sw) }

func newResponsesFramer(sw *streamWriter) *responsesFramer {
	return &responsesFramer{sw: sw, ids: newResponsesIDs(sw), created: sw.st.arrived.Unix(), clock: time.Now,
		timings: func() []byte { return llamaCppTimings(sw) }}
}

// responsesFramer writes the events of a Responses stream.
type responsesFramer struct {
	sw      *streamWriter
	ids     responsesIDs
	created int64
	clock   func() time.Time // completed_at's
	timings func() []byte    // llama.cpp's "timings" object
	seq     int              // the next sequence_number
	index   int              // the output_index of the current item

	body                                            bool // a non-streamed answer's body
	reasoningStarted, reasoningDone, contentStarted bool
	thinking                                        bool // Dialect.ThinkTags: "<think>" sent, "</think>" not yet
	reasoning, text                                 strings.Builder
}

// emit writes one event of type typ whose other members f writes, laid out
// as the dialect says (Ollama's keys in alphabetical order, with the
// sequence number; llama.cpp's "type" first, without).
func (f *responsesFramer) emit(kind string, tokens int, at time.Duration, typ string, members func(o *jsonObj)) bool {
	r := f.sw.rend
	var data []byte
	if f.sw.d.Layout == layoutLlamaCpp {
		data = r.object(func(o *jsonObj) { o.str("type", typ); members(o) })
	} else {
		n := f.seq
		f.seq++
		data = r.sortedObject(func(o *jsonObj) {
			members(o)
			o.num("sequence_number", n)
			o.str("type", typ)
		})
	}
	return f.sw.event(kind, tokens, at, typ, data)
}

func (f *responsesFramer) llama() bool { return f.sw.d.Layout == layoutLlamaCpp }

func (f *responsesFramer) begin(g *group) bool {
	for _, typ := range []string{"response.created", "response.in_progress"} {
		ok := f.emit(chunkFraming, 0, g.at, typ, func(o *jsonObj) {
			o.obj("response", func(o *jsonObj) { f.response(o, "in_progress", false, nil) })
		})
		if !ok {
			return false
		}
	}
	return true
}

func (f *responsesFramer) output(g *group, last bool) bool {
	if g.kind == kindReasoning && !f.sw.d.ThinkTags {
		return f.reasoningDelta(g)
	}
	text, kind := f.sw.thinkTagged(g, &f.thinking)
	return f.finishReasoning(g.at) && f.startContent(g.at) && f.textDelta(kind, g.tokens, g.at, text)
}

// reasoningDelta writes a reasoning delta, opening the reasoning item
// first.
func (f *responsesFramer) reasoningDelta(g *group) bool {
	if !f.reasoningStarted {
		f.reasoningStarted = true
		ok := f.emit(chunkFraming, 0, g.at, "response.output_item.added", func(o *jsonObj) {
			switch {
			case f.llama():
				o.obj("item", func(o *jsonObj) {
					o.str("id", f.ids.rs)
					o.raw("summary", "[]")
					o.str("type", "reasoning")
					o.raw("content", "[]")
					o.str("encrypted_content", "")
					o.str("status", "in_progress")
				})
			default:
				o.obj("item", func(o *jsonObj) {
					o.str("id", f.ids.rs)
					o.raw("summary", "[]")
					o.str("type", "reasoning")
				})
				o.num("output_index", f.index)
			}
		})
		if !ok {
			return false
		}
	}
	f.reasoning.WriteString(g.text)
	switch {
	case f.llama():
		return f.emit(chunkReasoning, g.tokens, g.at, "response.reasoning_text.delta", func(o *jsonObj) {
			o.str("delta", g.text)
			o.str("item_id", f.ids.rs)
		})
	case f.sw.d.Layout == layoutOllama:
		return f.emit(chunkReasoning, g.tokens, g.at, "response.reasoning_summary_text.delta", func(o *jsonObj) {
			o.str("delta", g.text)
			o.str("item_id", f.ids.rs)
			o.num("output_index", f.index)
			o.num("summary_index", 0)
		})
	}
	return f.emit(chunkReasoning, g.tokens, g.at, "response.reasoning_text.delta", func(o *jsonObj) {
		o.num("content_index", 0)
		o.str("delta", g.text)
		o.str("item_id", f.ids.rs)
		o.num("output_index", f.index)
	})
}

// finishReasoning closes the reasoning item, if one is open.
func (f *responsesFramer) finishReasoning(at time.Duration) bool {
	if !f.reasoningStarted || f.reasoningDone {
		return true
	}
	f.reasoningDone = true
	text := f.reasoning.String()
	ok := true
	switch {
	case f.llama():
	case f.sw.d.Layout == layoutOllama:
		ok = f.emit(chunkFraming, 0, at, "response.reasoning_summary_text.done", func(o *jsonObj) {
			o.str("item_id", f.ids.rs)
			o.num("output_index", f.index)
			o.num("summary_index", 0)
			o.str("text", text)
		})
	default:
		ok = f.emit(chunkFraming, 0, at, "response.reasoning_text.done", func(o *jsonObj) {
			o.num("content_index", 0)
			o.str("item_id", f.ids.rs)
			o.num("output_index", f.index)
			o.str("text", text)
		})
	}
	ok = ok && f.emit(chunkFraming, 0, at, "response.output_item.done", func(o *jsonObj) {
		o.obj("item", func(o *jsonObj) { f.reasoningItem(o, false) })
		if !f.llama() {
			o.num("output_index", f.index)
		}
	})
	f.index++
	return ok
}

// startContent opens the message item and its text part, once.
func (f *responsesFramer) startContent(at time.Duration) bool {
	if f.contentStarted {
		return true
	}
	f.contentStarted = true
	return f.emit(chunkFraming, 0, at, "response.output_item.added", func(o *jsonObj) {
		o.obj("item", func(o *jsonObj) {
			o.raw("content", "[]")
			o.str("id", f.ids.msg)
			o.str("role", "assistant")
			o.str("status", "in_progress")
			o.str("type", "message")
		})
		if !f.llama() {
			o.num("output_index", f.index)
		}
	}) && f.emit(chunkFraming, 0, at, "response.content_part.added", func(o *jsonObj) {
		if f.llama() {
			o.str("item_id", f.ids.msg)
			o.obj("part", func(o *jsonObj) { o.str("type", "output_text"); o.str("text", "") })
			return
		}
		o.num("content_index", 0)
		o.str("item_id", f.ids.msg)
		o.num("output_index", f.index)
		o.obj("part", func(o *jsonObj) { f.textPart(o, "") })
	})
}

// textDelta writes one response.output_text.delta.
func (f *responsesFramer) textDelta(kind string, tokens int, at time.Duration, text string) bool {
	if kind == chunkContent || kind == chunkReasoning {
		f.text.WriteString(text)
	}
	return f.emit(kind, tokens, at, "response.output_text.delta", func(o *jsonObj) {
		if f.llama() {
			o.str("item_id", f.ids.msg)
			o.str("delta", text)
			return
		}
		o.num("content_index", 0)
		o.str("delta", text)
		o.str("item_id", f.ids.msg)
		o.raw("logprobs", "[]")
		o.num("output_index", f.index)
	})
}

func (f *responsesFramer) end() bool {
	if !f.finishReasoning(now) {
		return false
	}
	if f.contentStarted {
		text := f.text.String()
		ok := f.emit(chunkFraming, 0, now, "response.output_text.done", func(o *jsonObj) {
			if f.llama() {
				o.str("item_id", f.ids.msg)
				o.str("text", text)
				return
			}
			o.num("content_index", 0)
			o.str("item_id", f.ids.msg)
			o.raw("logprobs", "[]")
			o.num("output_index", f.index)
			o.str("text", text)
		}) && f.emit(chunkFraming, 0, now, "response.content_part.done", func(o *jsonObj) {
			if f.llama() {
				o.str("item_id", f.ids.msg)
				o.obj("part", func(o *jsonObj) { f.textPart(o, text) })
				return
			}
			o.num("content_index", 0)
			o.str("item_id", f.ids.msg)
			o.num("output_index", f.index)
			o.obj("part", func(o *jsonObj) { f.textPart(o, text) })
		}) && f.emit(chunkFraming, 0, now, "response.output_item.done", func(o *jsonObj) {
			o.obj("item", func(o *jsonObj) { f.messageItem(o, text) })
			if !f.llama() {
				o.num("output_index", f.index)
			}
		})
		if !ok {
			return false
		}
	}
	if f.sw.d.OmitDone {
		return true // no terminal event, nor its usage
	}
	status := f.status(f.sw.plan.finish)
	typ := "response.completed"
	if status == "incomplete" {
		typ = "response.incomplete"
	}
	u := f.sw.usage()
	return f.emit(chunkUsage, 0, now, typ, func(o *jsonObj) {
		o.obj("response", func(o *jsonObj) { f.response(o, status, true, u) })
		if f.llama() {
			o.raw("timings", string(f.timings()))
		}
	})
}

// status is the status of an answer that ended with finish: "incomplete"
// for one the limit cut short, in the reference layout only.
func (f *responsesFramer) status(finish string) string {
	if finish == "length" && f.sw.d.Layout == layoutReference {
		return "incomplete"
	}
	return "completed"
}

func (f *responsesFramer) keepAlive() bool {
	return f.sw.write(chunkComment, 0, -1, f.sw.rend.comment("keep-alive"))
}

// streamError ends the stream with response.failed, the response's error
// saying why (the llama.cpp layout: its data-only error object).
func (f *responsesFramer) streamError() bool {
	if f.llama() {
		return f.sw.event(chunkError, 0, now, "", llamaCppError(&apiError{status: 500, message: streamErrorMessage, typ: "server_error"}))
	}
	return f.emit(chunkError, 0, now, "response.failed", func(o *jsonObj) {
		o.obj("response", func(o *jsonObj) { f.response(o, "failed", false, nil) })
	})
}

func (f *responsesFramer) malformed() bool {
	b := f.sw.rend.object(func(o *jsonObj) {
		o.str("type", "response.output_text.delta")
		o.str("item_id", f.ids.msg)
		o.str("delta", "x")
	})
	return f.sw.event(chunkMalformed, 0, now, "response.output_text.delta", b[:len(b)/2])
}

func (f *responsesFramer) oversized(text string) bool {
	return f.startContent(now) && f.textDelta(chunkOversized, 0, now, text)
}

func (responsesAPI) body(sw *streamWriter, a *answer) []byte {
	return newResponsesFramer(sw).answerBody(a)
}

// answerBody renders a non-streamed answer.
func (f *responsesFramer) answerBody(a *answer) []byte {
	f.body = true
	f.fill(a)
	b := f.sw.rend.object(func(o *jsonObj) { f.bodyResponse(o, f.status(a.finish), &a.usage) })
	if f.llama() {
		return b
	}
	return append(b, '\n') // Ollama's json.Encoder
}

// fill sets the framer's texts to a whole answer's.
func (f *responsesFramer) fill(a *answer) {
	f.reasoning.WriteString(a.reasoning)
	f.text.WriteString(a.content)
	f.reasoningStarted, f.reasoningDone = a.reasoning != "", a.reasoning != ""
	f.contentStarted = a.content != ""
}

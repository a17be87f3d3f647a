package fakeserver

import (
	"fmt"
	"time"
)

// chatAPI is POST /v1/chat/completions.
type chatAPI struct{}

func (chatAPI) name() string                             { return "chat" }
func (chatAPI) path() string                             { return "/v1/chat/completions" }
func (chatAPI) errorBody(_ *Dialect, e *apiError) []byte { return openAIError(e) }
func (chatAPI) contentType(d *Dialect) string            { return d.contentType() }

// chatRequest is the part of a chat completion request the fake reads.
type chatRequest struct {
	Model         string    `json:"model"`
	Messages      []message `json:"messages"`
	Stream        bool      `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Temperature         *float64       `json:"temperature"`
	MaxTokens           *int           `json:"max_tokens"`
	MaxCompletionTokens *int           `json:"max_completion_tokens"`
	IgnoreEOS           bool           `json:"ignore_eos"`
	ChatTemplateKwargs  map[string]any `json:"chat_template_kwargs"`
	ReasoningEffort     string         `json:"reasoning_effort"`
}

func (chatAPI) parse(body []byte) (request, *apiError) {
	var c chatRequest
	if bad := decodeBody(body, &c); bad != nil {
		return request{}, bad
	}
	if len(c.Messages) == 0 {
		return request{}, invalid("messages", "messages: want a non-empty array")
	}
	q := request{Model: c.Model, Messages: c.Messages, PromptField: "messages", Stream: c.Stream,
		IncludeUsage: c.StreamOptions != nil && c.StreamOptions.IncludeUsage, Temperature: c.Temperature,
		MaxTokens: c.MaxTokens, MaxField: "max_tokens", IgnoreEOS: c.IgnoreEOS, NoThinking: c.ReasoningEffort == "none"}
	if c.MaxCompletionTokens != nil {
		q.MaxTokens, q.MaxField = c.MaxCompletionTokens, "max_completion_tokens"
	}
	if v, ok := c.ChatTemplateKwargs["enable_thinking"].(bool); ok && !v {
		q.NoThinking = true
	}
	return q, nil
}

// chatHeader is the identity of a chat answer's chunks or body.
func chatHeader(sw *streamWriter, object string) header {
	return header{
		ID:      fmt.Sprintf("chatcmpl-%016x", sw.srv.ids(sw.st).Uint64()),
		Object:  object,
		Created: sw.st.arrived.Unix(),
		Model:   sw.srv.cfg.Model,
	}
}

func (chatAPI) body(sw *streamWriter, a *answer) []byte {
	reasoning, content := a.reasoning, a.content
	if sw.d.ThinkTags && reasoning != "" {
		reasoning, content = "", thinkOpen+reasoning+thinkClose+content
	}
	var u *usage
	if sw.d.Usage != usageNone {
		u = &a.usage
	}
	h := chatHeader(sw, "chat.completion")
	return sw.rend.completion(&h, reasoning, content, a.finish, u)
}

func (chatAPI) framer(sw *streamWriter) framer {
	return &chatFramer{sw: sw, h: chatHeader(sw, "chat.completion.chunk"),
		includeUsage: sw.st.tr.IncludeUsage && sw.d.Usage != usageNone}
}

// chatFramer writes chat.completion.chunk events as the Dialect says.
type chatFramer struct {
	sw           *streamWriter
	h            header
	includeUsage bool
	chunks       int  // output chunks written
	thinking     bool // ThinkTags: <think> sent, </think> not yet
}

func (f *chatFramer) chunk(kind string, tokens int, at time.Duration, dl *delta) bool {
	return f.sw.write(kind, tokens, at, f.sw.rend.event(f.sw.rend.chunk(&f.h, dl)))
}

func (f *chatFramer) begin(g *group) bool {
	if f.sw.d.Role != roleChunk {
		return true
	}
	return f.chunk(chunkRole, 0, g.at, &delta{Role: true})
}

func (f *chatFramer) output(g *group, last bool) bool {
	d := f.sw.d
	dl := delta{Role: f.chunks == 0 && d.Role == roleFirst}
	f.chunks++
	kind := chunkContent
	switch {
	case g.kind == kindReasoning && d.ThinkTags:
		dl.Content, dl.HasText, kind = g.text, true, chunkReasoning
		if !f.thinking {
			dl.Content, f.thinking = thinkOpen+g.text, true
		}
	case g.kind == kindReasoning:
		dl.Reasoning, kind = g.text, chunkReasoning
	default:
		dl.Content, dl.HasText = g.text, true
		if f.thinking {
			dl.Content, f.thinking = thinkClose+g.text, false
		}
	}
	if last && !d.FinishChunk {
		dl.Finish = f.sw.plan.finish
		if f.includeUsage && d.Usage == usageLastChoice {
			dl.Usage = f.sw.usage()
		}
	}
	return f.chunk(kind, g.tokens, g.at, &dl)
}

func (f *chatFramer) end() bool {
	d := f.sw.d
	if d.FinishChunk {
		dl := delta{HasText: true, Finish: f.sw.plan.finish}
		if f.includeUsage && d.Usage == usageLastChoice {
			dl.Usage = f.sw.usage()
		}
		if !f.chunk(chunkFinish, 0, -1, &dl) {
			return false
		}
	}
	if f.includeUsage && d.Usage == usageFinal {
		if !f.sw.write(chunkUsage, 0, -1, f.sw.rend.event(f.sw.rend.usageChunk(&f.h, f.sw.usage()))) {
			return false
		}
	}
	return d.OmitDone || f.done()
}

// done writes the terminal data: [DONE].
func (f *chatFramer) done() bool {
	return f.sw.write(chunkDone, 0, -1, f.sw.rend.event([]byte("[DONE]")))
}

func (f *chatFramer) keepAlive() bool {
	return f.sw.write(chunkComment, 0, -1, f.sw.rend.comment("keep-alive"))
}

// streamErrorBody is faultStreamError's in-stream error object (chat and
// completions).
const streamErrorBody = `{"error":{"message":"` + streamErrorMessage + `","type":"server_error","param":null,"code":500}}`

func (f *chatFramer) streamError() bool {
	if !f.sw.write(chunkError, 0, -1, f.sw.rend.event([]byte(streamErrorBody))) {
		return false
	}
	return f.sw.d.OmitDone || f.done()
}

func (f *chatFramer) malformed() bool {
	b := f.sw.rend.chunk(&f.h, &delta{Content: "x"})
	return f.sw.write(chunkMalformed, 0, -1, f.sw.rend.event(b[:len(b)/2]))
}

func (f *chatFramer) oversized(text string) bool {
	return f.chunk(chunkOversized, 0, -1, &delta{Content: text})
}

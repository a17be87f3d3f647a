package fakeserver

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// usage is the token accounting of one response.
type usage struct {
	Prompt, Completion, Cached, Reasoning int
	BadTotal                              bool // faultUsageTotal: total_tokens = Prompt
}

// header identifies the response a chunk belongs to.
type header struct {
	ID      string
	Object  string // "chat.completion.chunk" or "chat.completion"
	Created int64
	Model   string
}

// delta is the changing part of one chunk.
type delta struct {
	Role      bool   // include "role":"assistant"
	Reasoning string // reasoning text, "" for none
	Content   string
	HasText   bool // the chunk carries Content even if empty
	Finish    string
	Usage     *usage
}

// renderer writes chunk JSON in one dialect, byte for byte.
type renderer struct {
	d      *Dialect
	buf    bytes.Buffer
	enc    *json.Encoder
	events int // events framed so far, for EventIDs
}

func newRenderer(d *Dialect) *renderer {
	r := &renderer{d: d}
	r.enc = json.NewEncoder(&r.buf)
	r.enc.SetEscapeHTML(d.EscapeHTML)
	return r
}

// str appends s as a JSON string.
func (r *renderer) str(b []byte, s string) []byte {
	r.buf.Reset()
	_ = r.enc.Encode(s) // encoding a string cannot fail
	return append(b, bytes.TrimSuffix(r.buf.Bytes(), []byte("\n"))...)
}

func (r *renderer) head(b []byte, h *header) []byte {
	b = append(b, `{"id":`...)
	b = r.str(b, h.ID)
	b = append(b, `,"object":`...)
	b = r.str(b, h.Object)
	b = append(b, `,"created":`...)
	b = strconv.AppendInt(b, h.Created, 10)
	b = append(b, `,"model":`...)
	b = r.str(b, h.Model)
	if r.d.SystemFingerprint != "" {
		b = append(b, `,"system_fingerprint":`...)
		b = r.str(b, r.d.SystemFingerprint)
	}
	return b
}

func (r *renderer) usage(b []byte, u *usage) []byte {
	b = append(b, `"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(u.Prompt), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(u.Completion), 10)
	b = append(b, `,"total_tokens":`...)
	total := u.Prompt + u.Completion
	if u.BadTotal {
		total = u.Prompt
	}
	b = strconv.AppendInt(b, int64(total), 10)
	if !r.d.OmitCachedTokens {
		b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
		b = strconv.AppendInt(b, int64(u.Cached), 10)
		b = append(b, '}')
	}
	if u.Reasoning > 0 {
		b = append(b, `,"completion_tokens_details":{"reasoning_tokens":`...)
		b = strconv.AppendInt(b, int64(u.Reasoning), 10)
		b = append(b, '}')
	}
	return append(b, '}')
}

func (r *renderer) finish(b []byte, f string) []byte {
	if r.d.NullLogprobs {
		b = append(b, `,"logprobs":null`...)
	}
	if r.d.OmitFinishReason {
		return b
	}
	b = append(b, `,"finish_reason":`...)
	if f == "" {
		return append(b, "null"...)
	}
	b = r.str(b, f)
	if r.d.StopReason {
		b = append(b, `,"stop_reason":null`...)
	}
	return b
}

// chunk renders one streamed chunk with a single choice.
func (r *renderer) chunk(h *header, dl *delta) []byte {
	b := r.head(make([]byte, 0, 256), h)
	b = append(b, `,"choices":[{"index":0,"delta":{`...)
	n := 0
	field := func(name string) {
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, `":`...)
	}
	switch {
	case r.d.Role == roleEvery:
		field("role")
		b = append(b, `"assistant"`...)
		field("content")
		b = r.str(b, dl.Content)
	case r.d.Role == roleChunk && dl.Role:
		field("role")
		b = append(b, `"assistant"`...)
		field("content")
		b = r.str(b, dl.Content)
	case dl.HasText || dl.Content != "":
		field("content")
		b = r.str(b, dl.Content)
		if dl.Role {
			field("role")
			b = append(b, `"assistant"`...)
		}
	case dl.Role:
		field("role")
		b = append(b, `"assistant"`...)
	}
	if dl.Reasoning != "" {
		field(r.d.reasoningField())
		b = r.str(b, dl.Reasoning)
	}
	b = append(b, '}')
	b = r.finish(b, dl.Finish)
	b = append(b, "}]"...)
	if dl.Usage != nil {
		b = append(b, ',')
		b = r.usage(b, dl.Usage)
	}
	return append(b, '}')
}

// usageChunk renders the final "choices": [] chunk.
func (r *renderer) usageChunk(h *header, u *usage) []byte {
	b := r.head(make([]byte, 0, 256), h)
	b = append(b, `,"choices":[],`...)
	b = r.usage(b, u)
	return append(b, '}')
}

// completion renders a non-streamed chat.completion body with a trailing
// newline.
func (r *renderer) completion(h *header, reasoning, content, finish string, u *usage) []byte {
	b := r.head(make([]byte, 0, 256+len(content)+len(reasoning)), h)
	b = append(b, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)
	b = r.str(b, content)
	if reasoning != "" {
		b = append(b, ',', '"')
		b = append(b, r.d.reasoningField()...)
		b = append(b, `":`...)
		b = r.str(b, reasoning)
	}
	b = append(b, '}')
	b = r.finish(b, finish)
	b = append(b, '}', ']')
	if u != nil {
		b = append(b, ',')
		b = r.usage(b, u)
	}
	return append(b, '}', '\n')
}

// event frames one SSE data event, named Dialect.EventName when that is
// set.
func (r *renderer) event(data []byte) []byte { return r.namedEvent(r.d.EventName, data) }

// namedEvent frames one SSE data event with an "event: name" line first
// unless name is "".
func (r *renderer) namedEvent(name string, data []byte) []byte {
	nl := r.nl()
	r.events++
	b := make([]byte, 0, len(data)+len(name)+32)
	if name != "" {
		b = append(b, "event: "+name+nl...)
	}
	if r.d.EventIDs {
		b = append(b, "id: "+strconv.Itoa(r.events)+nl...)
	}
	if r.d.SplitData && len(data) > 0 && data[0] == '{' {
		if i := bytes.IndexByte(data, ','); i > 0 && bytes.HasPrefix(data, []byte(`{"id":"`)) {
			b = append(b, "data: "...)
			b = append(b, data[:i+1]...)
			b = append(b, nl...)
			data = data[i+1:]
		}
	}
	b = append(b, "data: "...)
	b = append(b, data...)
	b = append(b, nl...)
	return append(b, nl...)
}

// nl is the dialect's line end.
func (r *renderer) nl() string {
	if r.d.CRLF {
		return "\r\n"
	}
	return "\n"
}

// comment frames one SSE comment line and its blank line.
func (r *renderer) comment(text string) []byte {
	nl := r.nl()
	return []byte(": " + text + nl + nl)
}

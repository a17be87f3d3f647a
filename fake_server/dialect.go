package fakeserver

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
)

// UsageMode says where a stream carries usage when the request asked for it
// with stream_options.include_usage.
type UsageMode int

const (
	// UsageFinalChunk sends usage in a last chunk with "choices": [] (vLLM,
	// SGLang, OpenAI, ollama).
	UsageFinalChunk UsageMode = iota
	// UsageInLastChoice puts usage inside the chunk with the finish_reason.
	UsageInLastChoice
	// UsageOmitted never sends usage, even when asked (mock servers, some
	// routers).
	UsageOmitted
)

// RoleMode says where the assistant role appears in a stream.
type RoleMode int

const (
	// RoleOnlyChunk sends a first chunk whose delta is
	// {"role":"assistant","content":""} (vLLM), just before the first token.
	RoleOnlyChunk RoleMode = iota
	// RoleInFirstDelta puts "role" after "content" in the first token's delta
	// (the @dwmkerr/mock-llm capture).
	RoleInFirstDelta
	// RoleInEveryDelta starts every delta with "role":"assistant" and always
	// carries "content", possibly empty (the ollama capture).
	RoleInEveryDelta
)

// DefaultContentType is the Content-Type of a stream when the Dialect names
// none.
const DefaultContentType = "text/event-stream; charset=utf-8"

// Dialect is the set of wire details that differ between serving engines.
// The zero Dialect is vLLM's format without "logprobs".
type Dialect struct {
	// ReasoningField is the delta field carrying reasoning text:
	// "reasoning_content" (the default) or "reasoning".
	ReasoningField string
	// Usage places the usage object; usage is only sent when the request
	// set stream_options.include_usage (non-streamed responses always have it
	// unless UsageOmitted).
	Usage UsageMode
	// OmitDone leaves out the terminal "data: [DONE]".
	OmitDone bool
	// Role places the assistant role.
	Role RoleMode
	// FinishChunk sends the finish_reason in a separate chunk with an empty
	// delta (ollama) instead of on the last token's chunk (vLLM).
	FinishChunk bool
	// NullLogprobs writes "logprobs":null in every choice (vLLM).
	NullLogprobs bool
	// OmitCachedTokens leaves usage.prompt_tokens_details out.
	OmitCachedTokens bool
	// SystemFingerprint, when set, is written after "model".
	SystemFingerprint string
	// EscapeHTML escapes <, > and & as \u003c, \u003e, \u0026 (Go servers).
	EscapeHTML bool
	// CRLF ends SSE lines with "\r\n" instead of "\n".
	CRLF bool
	// KeepAlive, when positive, writes the SSE comment ": keep-alive" after
	// that much silence of the engine (queueing, prefill). A FaultStall
	// pause stays silent, so a client's stall detection can see it.
	KeepAlive time.Duration
	// ContentType of a stream; empty means DefaultContentType.
	ContentType string
	// EventName, when set, precedes every data line with "event: NAME".
	EventName string
	// EventIDs precedes every data line with "id: N", N counting from 1.
	EventIDs bool
	// OmitTokenize answers POST /tokenize and /v1/tokenize with 404, as
	// servers without a tokenizer endpoint (ollama, OpenAI) do.
	OmitTokenize bool
	// SplitData writes each JSON chunk over two "data:" lines, cut after
	// its first top-level comma; SSE joins them with a newline, which JSON
	// reads as whitespace.
	SplitData bool
}

// DialectVLLM is vLLM's OpenAI server format.
func DialectVLLM() Dialect { return Dialect{NullLogprobs: true} }

// DialectOllama is ollama 0.17's /v1 format, as in testdata/transcripts.
func DialectOllama() Dialect {
	return Dialect{
		ReasoningField:    "reasoning",
		Role:              RoleInEveryDelta,
		FinishChunk:       true,
		OmitCachedTokens:  true,
		SystemFingerprint: "fp_ollama",
		EscapeHTML:        true,
		ContentType:       "text/event-stream",
	}
}

// DialectMockLLM is the @dwmkerr/mock-llm format: no usage, role in the
// first delta, finish_reason on the last content chunk.
func DialectMockLLM() Dialect {
	return Dialect{
		Usage:       UsageOmitted,
		Role:        RoleInFirstDelta,
		ContentType: "text/event-stream",
	}
}

var dialects = map[string]func() Dialect{
	"vllm":     DialectVLLM,
	"ollama":   DialectOllama,
	"mock-llm": DialectMockLLM,
}

// DialectByName returns "vllm", "ollama" or "mock-llm".
func DialectByName(name string) (Dialect, error) {
	f, ok := dialects[name]
	if !ok {
		return Dialect{}, &ConfigError{Field: "Dialect", Value: name, Want: "vllm, ollama or mock-llm"}
	}
	return f(), nil
}

func (d Dialect) validate() error {
	rf := d.ReasoningField
	return firstInvalid(
		check{"Dialect.ReasoningField", rf, rf == "" || rf == "reasoning_content" || rf == "reasoning",
			"reasoning_content or reasoning"},
		check{"Dialect.Usage", int(d.Usage), d.Usage >= UsageFinalChunk && d.Usage <= UsageOmitted, "0..2"},
		check{"Dialect.Role", int(d.Role), d.Role >= RoleOnlyChunk && d.Role <= RoleInEveryDelta, "0..2"},
		check{"Dialect.KeepAlive", d.KeepAlive, d.KeepAlive >= 0, ">= 0"},
	)
}

func (d *Dialect) reasoningField() string {
	if d.ReasoningField == "" {
		return "reasoning_content"
	}
	return d.ReasoningField
}

func (d *Dialect) contentType() string {
	if d.ContentType == "" {
		return DefaultContentType
	}
	return d.ContentType
}

// usage is the token accounting of one response.
type usage struct {
	Prompt, Completion, Cached, Reasoning int
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
	b = strconv.AppendInt(b, int64(u.Prompt+u.Completion), 10)
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
	b = append(b, `,"finish_reason":`...)
	if f == "" {
		return append(b, "null"...)
	}
	return r.str(b, f)
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
	case r.d.Role == RoleInEveryDelta:
		field("role")
		b = append(b, `"assistant"`...)
		field("content")
		b = r.str(b, dl.Content)
	case r.d.Role == RoleOnlyChunk && dl.Role:
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

// event frames one SSE data event.
func (r *renderer) event(data []byte) []byte {
	nl := "\n"
	if r.d.CRLF {
		nl = "\r\n"
	}
	r.events++
	b := make([]byte, 0, len(data)+32)
	if r.d.EventName != "" {
		b = append(b, "event: "+r.d.EventName+nl...)
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

// comment frames one SSE comment line and its blank line.
func (r *renderer) comment(text string) []byte {
	nl := "\n"
	if r.d.CRLF {
		nl = "\r\n"
	}
	return []byte(": " + text + nl + nl)
}

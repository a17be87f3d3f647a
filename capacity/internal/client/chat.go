package client

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/anvilbench/anvil/capacity/internal/chunk"
)

// ChatCompletions is the dialect of OpenAI's chat completions, streamed
// (capacity/PROTOCOL.md#wire-protocol): POST {BaseURL}/chat/completions
// with the prompt as the one user message, "stream": true and
// "stream_options": {"include_usage": true}; an answer of
// chat.completion.chunk events ended by data: [DONE], each decoded by the
// allocation-free decoder of package chunk.
var ChatCompletions Dialect = chatCompletions{}

type chatCompletions struct{}

// Path implements Dialect.
func (chatCompletions) Path() string { return "/chat/completions" }

// Header implements Dialect: the answer is an event stream; the key is a
// bearer token.
func (chatCompletions) Header(h http.Header, key string) {
	h.Set("Accept", eventStreamType)
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
}

// Streams implements Dialect.
func (chatCompletions) Streams() bool { return true }

// Encode implements Dialect: {"messages":[{"content":PROMPT,"role":"user"}],
// then the other fields sorted by name, as the reference tool writes
// them: model, max_tokens, stream, stream_options, temperature
// (DefaultTemperature unless set), top_p when set, the thinking control
// (chat_template_kwargs or reasoning_effort) and the extra fields.
func (chatCompletions) Encode(r *Request) (head, tail []byte, err error) {
	f := sampledFields(r, 8)
	f["max_tokens"] = r.MaxTokens
	f["stream"] = true
	f["stream_options"] = map[string]bool{"include_usage": true}
	switch {
	case r.ReasoningEffort != "":
		f["reasoning_effort"] = r.ReasoningEffort
	case r.Thinking != nil:
		f["chat_template_kwargs"] = map[string]bool{"enable_thinking": *r.Thinking}
	}
	fields, err := encodeJSON(f) // {"max_tokens":..., ...}
	if err != nil {
		return nil, nil, err
	}
	if r.Messages == nil {
		return []byte(`{"messages":[{"content":`), append([]byte(`,"role":"user"}],`), fields[1:]...), nil
	}
	list, err := encodeJSON(chatMessages(r.Messages))
	if err != nil {
		return nil, nil, err
	}
	head = append(append(append([]byte(`{"messages":`), list...), ','), fields[1:]...)
	return head, nil, nil
}

// chatMessage is a chat message as the request body writes it: content,
// then role, as the reference does.
type chatMessage struct {
	Content string `json:"content"`
	Role    string `json:"role"`
}

// encodeJSON is v as the request bodies write JSON: Go's encoding without
// HTML escaping, without the encoder's newline.
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(b.Bytes()), nil
}

// NewDecoder implements Dialect.
func (chatCompletions) NewDecoder() Decoder { return new(chatDecoder) }

// chatDecoder decodes the events of one chat stream with the
// allocation-free decoder of package chunk (which hands anything unusual
// to encoding/json itself, with the same results).
type chatDecoder struct {
	dec chunk.Decoder
}

// Reset implements Decoder: a chat chunk is decoded on its own, so there
// is nothing to forget.
func (d *chatDecoder) Reset() {}

// terminalData is the data of the event that ends a stream: data: [DONE].
const terminalData = "[DONE]"

// isTerminalBytes reports whether an event's data is the terminal [DONE]
// (white space around it tolerated).
func isTerminalBytes(data []byte) bool { return string(bytes.TrimSpace(data)) == terminalData }

// sseErrorEvent is the event type of an in-stream error event.
const sseErrorEvent = "error"

// Decode implements Decoder. An event named "error" is the server's error
// whatever its data; an event without data (a named ping) carries
// nothing; data: [DONE] is the terminal event; any other data is one
// chat.completion.chunk, or an error object in its place (an "error"
// member, or vLLM's and SGLang's {"object":"error","message":...}). Its
// common path (a content or reasoning delta) allocates nothing.
func (d *chatDecoder) Decode(name, data []byte, ev *Event) error {
	if len(name) != 0 && string(name) == sseErrorEvent {
		ev.Error, ev.ErrorKind = data, "error event"
		return nil
	}
	if len(data) == 0 {
		return nil // a named event without data, e.g. a ping
	}
	if isTerminalBytes(data) {
		ev.Done = true
		return nil
	}
	c, err := d.dec.Decode(data)
	if err != nil {
		return chunkError(err)
	}
	if c.HasError() {
		ev.Error, ev.ErrorKind = c.Error, "error object"
		return nil
	}
	if c.IsErrorObject() {
		ev.Error, ev.ErrorKind = data, "error object"
		if c.Message.NonEmpty() {
			ev.Error = c.Message.Bytes
		}
		return nil
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.HasReasoning() {
			ev.Reasoning = true
		}
		if ch.Content.NonEmpty() {
			ev.Content = append(ev.Content, ch.Content.Bytes)
		}
		if ch.FinishReason.NonEmpty() {
			ev.Finish = append(ev.Finish, ch.FinishReason.Bytes)
		}
	}
	if c.Usage.Present {
		ev.Usage = usageOf(&c.Usage, data)
	}
	if c.Timings != nil {
		ev.Timings = c.Timings
	}
	return nil
}

// sseDataPrefix starts the one line of the common event.
const sseDataPrefix = "data: "

// repeatedContent implements contentRepeater: an event "data: " + a
// payload that repeats the last plain content chunk's shape
// (chunk.Decoder.RepeatedContent) + "\n\n". Decode of that payload
// decodes the repeat into the content text alone; and a chat chunk is
// decoded on its own, so the calls after it are unchanged.
func (d *chatDecoder) repeatedContent(rest []byte) (int, []byte, bool) {
	if len(rest) < len(sseDataPrefix) || string(rest[:len(sseDataPrefix)]) != sseDataPrefix {
		return 0, nil, false
	}
	n, text, ok := d.dec.RepeatedContent(rest[len(sseDataPrefix):])
	end := len(sseDataPrefix) + n
	if !ok || len(rest) < end+2 || rest[end] != '\n' || rest[end+1] != '\n' {
		return 0, nil, false
	}
	return end + 2, text, true
}

// decodeChunk parses one event's data with dec: exactly one JSON object,
// else an error (errNotObject, errTrailingData, or encoding/json's own).
// The chunk and its byte slices are valid until the next decode.
func decodeChunk(dec *chunk.Decoder, data []byte) (*chunk.Chunk, error) {
	c, err := dec.Decode(data)
	if err != nil {
		return nil, chunkError(err)
	}
	return c, nil
}

// chunkError is the client's error for a payload package chunk refused.
func chunkError(err error) error {
	switch err {
	case chunk.ErrNotObject:
		return errNotObject
	case chunk.ErrTrailingData:
		return errTrailingData
	}
	return err
}

// chunkUsage is the usage object read with encoding/json: the slow path of
// a usage count that is not a plain integer literal (see usageOf).
type chunkUsage struct {
	PromptTokens        Count `json:"prompt_tokens"`
	CompletionTokens    Count `json:"completion_tokens"`
	TotalTokens         Count `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens Count `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// usageOf is what the client keeps of a chunk's usage. A count that is a
// plain integer literal (all a server normally writes) is taken from the
// fast decoder; any other value (24.0, 1e3, "12", true, an object) is
// read again from data with encoding/json into Count, so that what is
// accepted and the JSON text a failure quotes stay exactly the client's
// rules. That path runs at most once per stream (the usage chunk), and only
// for such a count.
func usageOf(u *chunk.Usage, data []byte) Usage {
	if !u.Present {
		return Usage{}
	}
	if plainCount(u.PromptTokens) && plainCount(u.CompletionTokens) && plainCount(u.TotalTokens) && plainCount(u.CachedTokens) {
		return Usage{Present: true, Prompt: fastCount(u.PromptTokens), Completion: fastCount(u.CompletionTokens),
			Total: fastCount(u.TotalTokens), Cached: fastCount(u.CachedTokens)}
	}
	var slow struct {
		Usage *chunkUsage `json:"usage"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(data), &slow); err != nil || slow.Usage == nil {
		// Unreachable: the fast decoder accepted the payload and found
		// usage an object. Counted as not reported rather than guessed.
		return Usage{Present: true}
	}
	s := Usage{Present: true, Prompt: slow.Usage.PromptTokens, Completion: slow.Usage.CompletionTokens, Total: slow.Usage.TotalTokens}
	if d := slow.Usage.PromptTokensDetails; d != nil {
		s.Cached = d.CachedTokens
	}
	return s
}

// plainCount reports whether a count is absent, null or an unquoted
// integer literal within int64: the values whose meaning the fast decoder
// and Count agree on.
func plainCount(n chunk.Int) bool {
	switch n.Kind {
	case chunk.IntAbsent, chunk.IntNull:
		return true
	case chunk.IntInteger:
		return !n.Quoted
	}
	return false
}

// fastCount is a plain count (see plainCount) as a Count.
func fastCount(n chunk.Int) Count {
	if v, ok := n.Int64(); ok {
		return Count{v: v, ok: true}
	}
	return Count{}
}

package client

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/anvilbench/anvil/capacity/internal/completions"
)

// Completions is the dialect of the legacy text completions, streamed
// (capacity/PROTOCOL.md#api-completions): POST {BaseURL}/completions with
// the prompt as "prompt", "max_tokens", "stream": true and
// "stream_options": {"include_usage": true}; an answer of text_completion
// chunks ended by data: [DONE], each decoded by package completions.
var Completions Dialect = completionsDialect{}

type completionsDialect struct{}

// Path implements Dialect.
func (completionsDialect) Path() string { return "/completions" }

// Header implements Dialect: an event stream, a bearer token.
func (completionsDialect) Header(h http.Header, key string) { bearerStream(h, key) }

// Streams implements Dialect.
func (completionsDialect) Streams() bool { return true }

// Encode implements Dialect: {"prompt":PROMPT, then the other fields
// sorted by name: max_tokens, model, stream, stream_options, temperature,
// top_p when set, and the extra fields. A raw prompt has no chat template
// and no conversation: validation refuses a thinking control and an
// explicit conversation.
func (completionsDialect) Encode(r *Request) (head, tail []byte, err error) {
	f := sampledFields(r, 8)
	f["max_tokens"] = r.MaxTokens
	f["stream"] = true
	f["stream_options"] = map[string]bool{"include_usage": true}
	var list any
	if r.Messages != nil {
		// Unreachable through capacity's validation: one prompt, the
		// conversation's texts.
		var b bytes.Buffer
		for _, m := range r.Messages {
			b.WriteString(m.Content)
		}
		list = b.String()
	}
	return promptFirst("prompt", "", "", f, list)
}

// NewDecoder implements Dialect.
func (completionsDialect) NewDecoder() Decoder {
	return &completionsDecoder{d: completions.NewDecoder()}
}

// completionsDecoder decodes the events of one completions stream.
type completionsDecoder struct {
	d *completions.Decoder
}

// Reset implements Decoder: each chunk is decoded on its own.
func (*completionsDecoder) Reset() {}

// Decode implements Decoder as chat's decoder does, a choice's text in
// place of its delta.content: data: [DONE] ends the answer, an "error"
// event or member (or vLLM's error object) is the server's error, and data:
// null (llama.cpp's first event of a batch) carries nothing. A usage object
// whose counts are all 0 on a chunk with text (Ollama's placeholder before
// the real counts) is not reported.
func (d *completionsDecoder) Decode(name, data []byte, ev *Event) error {
	if string(name) == sseErrorEvent {
		ev.Error, ev.ErrorKind = data, "error event"
		return nil
	}
	if len(data) == 0 {
		return nil
	}
	if isTerminalBytes(data) {
		ev.Done = true
		return nil
	}
	e, err := d.d.Decode(data)
	if err != nil {
		return pickError(err)
	}
	switch {
	case e.Null:
		return nil
	case e.Error != nil:
		ev.Error, ev.ErrorKind = e.Error, "error object"
		return nil
	case e.IsErrorObject():
		ev.Error, ev.ErrorKind = data, "error object"
		if e.Message.NonEmpty() {
			ev.Error = e.Message.Bytes
		}
		return nil
	}
	for i := range e.Choices {
		c := &e.Choices[i]
		if c.Text.NonEmpty() {
			ev.Content = append(ev.Content, c.Text.Bytes)
		}
		if c.FinishReason.NonEmpty() {
			ev.Finish = append(ev.Finish, c.FinishReason.Bytes)
		}
	}
	if u := &e.Usage; u.Present && !(len(ev.Content) > 0 && zeroCounts(u)) {
		ev.Usage = completionsUsage(u, data)
	}
	ev.Timings = e.Timings
	return nil
}

// zeroCounts reports whether every count of u is the integer 0.
func zeroCounts(u *completions.Usage) bool {
	for _, n := range [3]Count{fastCount(u.Prompt), fastCount(u.Completion), fastCount(u.Total)} {
		if !n.ok || n.v != 0 {
			return false
		}
	}
	return true
}

// completionsUsage is the client's Usage of a chunk's usage, as chat's.
func completionsUsage(u *completions.Usage, data []byte) Usage {
	if plainCount(u.Prompt) && plainCount(u.Completion) && plainCount(u.Total) && plainCount(u.Cached) {
		return Usage{Present: true, Prompt: fastCount(u.Prompt), Completion: fastCount(u.Completion),
			Total: fastCount(u.Total), Cached: fastCount(u.Cached)}
	}
	var slow struct {
		Usage *chunkUsage `json:"usage"`
	}
	if json.Unmarshal(bytes.TrimSpace(data), &slow) != nil || slow.Usage == nil {
		return Usage{Present: true} // unreachable: the decoder accepted the data
	}
	s := Usage{Present: true, Prompt: slow.Usage.PromptTokens, Completion: slow.Usage.CompletionTokens, Total: slow.Usage.TotalTokens}
	if pd := slow.Usage.PromptTokensDetails; pd != nil {
		s.Cached = pd.CachedTokens
	}
	return s
}

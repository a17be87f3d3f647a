package client

import (
	"encoding/json"
	"net/http"

	"github.com/anvilbench/anvil/capacity/internal/jsonpick"
	"github.com/anvilbench/anvil/capacity/internal/messages"
)

// AnthropicVersion is the anthropic-version header every Messages request
// carries: the version of the API whose events the decoder reads.
const AnthropicVersion = "2023-06-01"

// Messages is the dialect of Anthropic's Messages API, streamed
// (capacity/PROTOCOL.md#api-messages): POST {BaseURL}/messages with the
// prompt as the one user message, "max_tokens" and "stream": true, the
// credential in x-api-key and the anthropic-version header; an answer of
// message_start, content block and message_delta events ended by
// message_stop, each decoded by package messages.
var Messages Dialect = messagesDialect{}

type messagesDialect struct{}

// Path implements Dialect.
func (messagesDialect) Path() string { return "/messages" }

// Header implements Dialect: an event stream; the key in x-api-key;
// anthropic-version.
func (messagesDialect) Header(h http.Header, key string) {
	h.Set("Accept", eventStreamType)
	h.Set("Anthropic-Version", AnthropicVersion)
	if key != "" {
		h.Set("X-Api-Key", key)
	}
}

// Streams implements Dialect.
func (messagesDialect) Streams() bool { return true }

// thinkingBudget is the budget_tokens of a request that switches thinking
// on: the least Anthropic accepts.
const thinkingBudget = 1024

// Encode implements Dialect: {"messages":[{"content":PROMPT,"role":"user"}],
// then the other fields sorted by name: max_tokens, model, stream,
// temperature, thinking ({"type":"enabled","budget_tokens":1024} or
// {"type":"disabled"}), top_p when set, and the extra fields. An explicit
// conversation's system messages are the "system" field, the others the
// messages. (The Messages API has no reasoning effort: validation refuses
// one.)
func (messagesDialect) Encode(r *Request) (head, tail []byte, err error) {
	f := sampledFields(r, 8)
	f["max_tokens"] = r.MaxTokens
	f["stream"] = true
	if r.Thinking != nil {
		if *r.Thinking {
			f["thinking"] = map[string]any{"type": "enabled", "budget_tokens": thinkingBudget}
		} else {
			f["thinking"] = map[string]string{"type": "disabled"}
		}
	}
	if r.Messages == nil {
		return promptFirst("messages", `[{"content":`, `,"role":"user"}]`, f, nil)
	}
	var system string
	var turns []Message
	for _, m := range r.Messages {
		if m.Role == "system" {
			if system != "" {
				system += "\n"
			}
			system += m.Content
			continue
		}
		turns = append(turns, m)
	}
	if system != "" {
		f["system"] = system
	}
	return promptFirst("messages", "", "", f, chatMessages(turns))
}

// NewDecoder implements Dialect.
func (messagesDialect) NewDecoder() Decoder { return &messagesDecoder{d: messages.NewDecoder()} }

// messagesDecoder decodes the events of one Messages stream. Its usage is
// the counts so far: message_start reports the input, message_delta the
// output (and, from some servers, the input again); each count is the
// last one reported.
type messagesDecoder struct {
	d *messages.Decoder
	// counts are input, output, cache read and cache creation, as last
	// reported.
	counts [4]Count
}

// Reset implements Decoder: the counts of the last answer are forgotten.
func (d *messagesDecoder) Reset() { d.counts = [4]Count{} }

// Decode implements Decoder: a text delta (or a text block that starts
// with text) is visible content, a thinking delta reasoning;
// message_start and message_delta carry the usage, message_delta the stop
// reason as the finish reason; message_stop ends the answer; an error
// event is the server's error; ping and every other event are activity.
func (d *messagesDecoder) Decode(name, data []byte, ev *Event) error {
	e, err := namedDecode(d.d, name, data, ev)
	if e == nil {
		return err
	}
	switch e.Kind {
	case messages.Text, messages.Thinking:
		ev.addDelta(e.Text, e.Kind == messages.Thinking)
	case messages.BlockStart:
		ev.addDelta(e.Text, e.BlockType.Is("thinking"))
	case messages.MessageDelta:
		if e.StopReason.NonEmpty() {
			ev.Finish = append(ev.Finish, e.StopReason.Bytes)
		}
	case messages.MessageStop:
		ev.Done = true
	case messages.Error:
		ev.Error, ev.ErrorKind = []byte(e.ErrorMessage()), "error event"
		return nil
	}
	if e.Usage.Present {
		ev.Usage = d.merge(&e.Usage, data)
	}
	return nil
}

// merge folds an event's usage into the counts so far (a count the event
// leaves out keeps its earlier value) and returns them: the prompt tokens
// are the input tokens plus those read from and written to the cache, the
// cached ones those read.
func (d *messagesDecoder) merge(u *messages.Usage, data []byte) Usage {
	ints := [4]jsonpick.Int{u.Input, u.Output, u.CacheRead, u.CacheCreation}
	plain := true
	var now [4]Count
	for i, n := range ints {
		plain = plain && plainCount(n)
		now[i] = fastCount(n)
	}
	if !plain {
		now = slowMessagesUsage(data)
	}
	for i, n := range ints {
		if n.Kind != jsonpick.IntAbsent {
			d.counts[i] = now[i]
		}
	}
	c := &d.counts
	return Usage{Present: true, Prompt: promptOf(c[0], c[2], c[3]), Completion: c[1], Cached: c[2]}
}

// promptOf is input + cache read + cache creation, each counted only when
// reported; a count that is not a valid integer makes the sum that count
// (so that the usage check names it).
func promptOf(in, read, made Count) Count {
	var sum Count
	for _, c := range [3]Count{in, read, made} {
		switch {
		case c.bad != "":
			return c
		case c.ok:
			sum.v += c.v
			sum.ok = true
		}
	}
	return sum
}

// slowMessagesUsage reads an event's usage counts with encoding/json, for
// a count that is not a plain integer: message.usage of message_start,
// else usage.
func slowMessagesUsage(data []byte) [4]Count {
	type counts struct {
		Input Count `json:"input_tokens"`
		Out   Count `json:"output_tokens"`
		Read  Count `json:"cache_read_input_tokens"`
		Made  Count `json:"cache_creation_input_tokens"`
	}
	var slow struct {
		Message *struct {
			Usage *counts `json:"usage"`
		} `json:"message"`
		Usage *counts `json:"usage"`
	}
	if json.Unmarshal(data, &slow) != nil {
		return [4]Count{}
	}
	c := slow.Usage
	if slow.Message != nil && slow.Message.Usage != nil {
		c = slow.Message.Usage
	}
	if c == nil {
		return [4]Count{}
	}
	return [4]Count{c.Input, c.Out, c.Read, c.Made}
}

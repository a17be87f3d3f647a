// Package responses decodes the events of an OpenAI Responses stream
// (POST /v1/responses with "stream": true) into what the measurement
// protocol reads of each, without a general encoding/json decode and
// without allocating in steady state (package jsonpick, whose rules of
// equivalence with encoding/json, fallback and aliasing apply).
//
// # What an event is
//
// The data of every event is one JSON object whose "type" names it (the
// SSE event line repeats the name; llama.cpp's mid-stream error has none).
// The event's Kind:
//
//   - Text: "response.output_text.delta" (and "response.refusal.delta",
//     a refusal's visible text): Delta is the text.
//   - Reasoning: "response.reasoning_text.delta" and
//     "response.reasoning_summary_text.delta": Delta is reasoning.
//   - Completed: "response.completed", the end of a whole answer, with
//     response.usage.
//   - Incomplete: "response.incomplete", the end of an answer cut short
//     (response.incomplete_details.reason, "max_output_tokens" when the
//     limit stopped it), with response.usage.
//   - Failed: "response.failed": response.error says why.
//   - Error: "type" "error", an SSE event named "error", or a payload with
//     a non-null top-level "error" member whatever its type (llama.cpp's
//     {"error":{"code":500,"message":...}} without an event line).
//   - Other: every other event (response.created, response.in_progress,
//     the added and done events, response.output_text.done, ...), and any
//     type this package does not know: counted by the client, kept out of
//     the timing.
//
// Of the payload the decoder keeps: type, delta, response.status,
// response.usage (input_tokens, output_tokens, total_tokens,
// input_tokens_details.cached_tokens, output_tokens_details.reasoning_tokens),
// response.incomplete_details.reason, response.error and the top-level
// error (raw), the top-level message and code of an error event, and
// llama.cpp's "timings" beside "response" (raw). Every other member (the
// response's output, which repeats the whole text, included) is validated
// and skipped.
package responses

import (
	"github.com/anvilbench/anvil/capacity/internal/jsonpick"
)

// Kind is what an event is to the client.
type Kind uint8

// The kinds of event.
const (
	Other Kind = iota
	Text
	Reasoning
	Completed
	Incomplete
	Failed
	Error
)

var kindNames = [...]string{"other", "text", "reasoning", "completed", "incomplete", "failed", "error"}

// String returns the kind's name.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(?)"
}

// The event types a Kind other than Other stands for.
const (
	TypeOutputTextDelta       = "response.output_text.delta"
	TypeRefusalDelta          = "response.refusal.delta"
	TypeReasoningTextDelta    = "response.reasoning_text.delta"
	TypeReasoningSummaryDelta = "response.reasoning_summary_text.delta"
	TypeCompleted             = "response.completed"
	TypeIncomplete            = "response.incomplete"
	TypeFailed                = "response.failed"
	TypeError                 = "error"
)

// kindOf returns the kind of an event type.
func kindOf(t []byte) Kind {
	switch string(t) {
	case TypeOutputTextDelta, TypeRefusalDelta:
		return Text
	case TypeReasoningTextDelta, TypeReasoningSummaryDelta:
		return Reasoning
	case TypeCompleted:
		return Completed
	case TypeIncomplete:
		return Incomplete
	case TypeFailed:
		return Failed
	case TypeError:
		return Error
	}
	return Other
}

// Usage is response.usage.
type Usage struct {
	// Present: response.usage is an object (not absent, not null).
	Present bool
	// Input, Output and Total are input_tokens, output_tokens and
	// total_tokens.
	Input, Output, Total jsonpick.Int
	// Cached is input_tokens_details.cached_tokens, Reasoning
	// output_tokens_details.reasoning_tokens.
	Cached, Reasoning jsonpick.Int
}

// Event is what is kept of one event.
type Event struct {
	Kind Kind
	// Type is the data's "type" member.
	Type jsonpick.Text
	// Delta is the text of a Text or Reasoning event.
	Delta jsonpick.Text
	// Status is response.status ("completed", "incomplete", "failed";
	// llama.cpp and Ollama answer "completed" also when
	// max_output_tokens stopped the answer).
	Status jsonpick.Text
	// IncompleteReason is response.incomplete_details.reason.
	IncompleteReason jsonpick.Text
	Usage            Usage
	// Error is the raw JSON of the top-level "error" member, or else of
	// response.error, when not null; nil otherwise.
	Error []byte
	// Message and Code are an error event's top-level "message" and
	// "code" (OpenAI's {"type":"error","code":...,"message":...}).
	Message jsonpick.Text
	Code    []byte
	// Timings is the raw JSON of llama.cpp's "timings" object beside
	// "response" in response.completed, nil when absent or null.
	Timings []byte
}

// schema is the members the decoder reads.
var schema = jsonpick.Compile(
	jsonpick.Str("type"),
	jsonpick.Str("delta"),
	jsonpick.Obj("response",
		jsonpick.Str("status"),
		jsonpick.Obj("usage",
			jsonpick.Count("input_tokens"),
			jsonpick.Count("output_tokens"),
			jsonpick.Count("total_tokens"),
			jsonpick.Obj("input_tokens_details", jsonpick.Count("cached_tokens")),
			jsonpick.Obj("output_tokens_details", jsonpick.Count("reasoning_tokens"))),
		jsonpick.Obj("incomplete_details", jsonpick.Str("reason")),
		jsonpick.Raw("error")),
	jsonpick.Raw("error"),
	jsonpick.Str("message"),
	jsonpick.Raw("code"),
	jsonpick.Raw("timings"),
)

var (
	sType       = schema.Slot("type")
	sDelta      = schema.Slot("delta")
	sStatus     = schema.Slot("response.status")
	sUsage      = schema.Slot("response.usage")
	sInput      = schema.Slot("response.usage.input_tokens")
	sOutput     = schema.Slot("response.usage.output_tokens")
	sTotal      = schema.Slot("response.usage.total_tokens")
	sCached     = schema.Slot("response.usage.input_tokens_details.cached_tokens")
	sReasoning  = schema.Slot("response.usage.output_tokens_details.reasoning_tokens")
	sIncomplete = schema.Slot("response.incomplete_details.reason")
	sRespError  = schema.Slot("response.error")
	sError      = schema.Slot("error")
	sMessage    = schema.Slot("message")
	sCode       = schema.Slot("code")
	sTimings    = schema.Slot("timings")
)

// A Decoder decodes the events of one stream, one after the other. The
// zero value is not ready: use NewDecoder. A Decoder is not safe for
// concurrent use.
type Decoder struct {
	d  *jsonpick.Decoder
	ev Event
	// name is the last event's name, for an event that repeats it
	// (jsonpick's Decoder.Again): its Event is the last one's but for the
	// bytes.
	name []byte
}

// NewDecoder returns a Decoder.
func NewDecoder() *Decoder { return &Decoder{d: jsonpick.NewDecoder(schema).Repeat(sDelta)} }

// Decode decodes one event: name is its SSE event type ("" when it had no
// event line), data its data. It returns jsonpick.ErrNotObject,
// jsonpick.ErrTrailingData or a *jsonpick.MalformedError when the data is
// not exactly one JSON object. The event and its byte slices are valid
// until the next call.
func (d *Decoder) Decode(name, data []byte) (*Event, error) {
	if err := d.d.Decode(data); err != nil {
		return nil, err
	}
	v := d.d.Value
	if d.d.Again() && string(name) == string(d.name) {
		e, moved := &d.ev, jsonpick.Moved
		moved(&e.Type.Bytes, v(sType))
		moved(&e.Delta.Bytes, v(sDelta))
		moved(&e.Status.Bytes, v(sStatus))
		moved(&e.IncompleteReason.Bytes, v(sIncomplete))
		moved(&e.Message.Bytes, v(sMessage))
		moved(&e.Code, v(sCode))
		moved(&e.Timings, v(sTimings))
		if v(sError).Bytes != nil {
			moved(&e.Error, v(sError))
		} else {
			moved(&e.Error, v(sRespError))
		}
		return e, nil
	}
	d.name = append(d.name[:0], name...)
	d.ev = Event{
		Type:             v(sType).Text(),
		Delta:            v(sDelta).Text(),
		Status:           v(sStatus).Text(),
		IncompleteReason: v(sIncomplete).Text(),
		Message:          v(sMessage).Text(),
		Code:             v(sCode).Bytes,
		Timings:          v(sTimings).Bytes,
		Error:            v(sError).Bytes,
	}
	if d.ev.Error == nil {
		d.ev.Error = v(sRespError).Bytes
	}
	if v(sUsage).Kind == jsonpick.Object {
		d.ev.Usage = Usage{Present: true, Input: v(sInput).Int, Output: v(sOutput).Int, Total: v(sTotal).Int,
			Cached: v(sCached).Int, Reasoning: v(sReasoning).Int}
	}
	switch {
	case string(name) == TypeError, v(sError).Bytes != nil:
		d.ev.Kind = Error
	case d.ev.Type.Kind == jsonpick.String:
		d.ev.Kind = kindOf(d.ev.Type.Bytes)
	default:
		d.ev.Kind = kindOf(name)
	}
	return &d.ev, nil
}

// Fallbacks returns the number of payloads decoded by encoding/json so far.
func (d *Decoder) Fallbacks() int { return d.d.Fallbacks() }

// ErrorMessage returns the server's message of an Error or Failed event:
// the error event's message, else the "message" of its error object
// (response.error's for Failed), else that object's JSON text; "" when
// there is none. It allocates: it is for the one event that ends a
// stream.
func (e *Event) ErrorMessage() string {
	if e.Message.NonEmpty() {
		return string(e.Message.Bytes)
	}
	if e.Error != nil {
		if m, ok := jsonpick.Message(e.Error); ok {
			return m
		}
		return string(e.Error)
	}
	return ""
}

// Repeats returns the number of events decoded as repeats of an earlier
// event's shape (package jsonpick's Decoder.Repeat): every text delta of
// a stream after its first, normally.
func (d *Decoder) Repeats() int { return d.d.Repeats() }

// Package completions decodes the events of a legacy completions stream
// (POST /v1/completions with "stream": true, objects of type
// text_completion) into what the measurement protocol reads of each,
// without a general encoding/json decode and without allocating in steady
// state (package jsonpick, whose rules of equivalence with encoding/json,
// fallback and aliasing apply).
//
// # What is decoded
//
// The data of an event is one JSON object, or the literal null (llama.cpp
// sends "data: null" first when the prompt is a batch). Of the object the
// decoder keeps:
//
//   - "choices": every element, in array order (the "index" member is not
//     read), with its text (visible) and finish_reason.
//   - "usage": whether it is a non-null object, and prompt_tokens,
//     completion_tokens, total_tokens and
//     prompt_tokens_details.cached_tokens. Ollama sends
//     {"prompt_tokens":0,"completion_tokens":0,"total_tokens":0} on every
//     chunk before the real counts of the last; llama.cpp puts them on the
//     finish chunk, Ollama and vLLM in a chunk of their own with
//     "choices": [].
//   - "error" (raw, when not null), "object" and "message" (vLLM's and
//     SGLang's error object), and llama.cpp's "timings" (raw).
//
// Every other member is validated and skipped.
package completions

import (
	"bytes"

	"github.com/anvilbench/anvil/capacity/internal/jsonpick"
)

// Choice is what is kept of one element of "choices".
type Choice struct {
	Text         jsonpick.Text // text
	FinishReason jsonpick.Text // finish_reason
}

// Usage is the "usage" member.
type Usage struct {
	// Present: usage is an object (not absent, not null).
	Present bool
	// Prompt, Completion and Total are prompt_tokens, completion_tokens
	// and total_tokens; Cached is prompt_tokens_details.cached_tokens.
	Prompt, Completion, Total, Cached jsonpick.Int
}

// Event is what is kept of one event.
type Event struct {
	// Null: the data is the literal null, an event with nothing in it.
	Null bool
	// Choices holds every element of "choices" in array order.
	Choices []Choice
	Usage   Usage
	// Error is the raw JSON of a non-null "error" member (an in-stream
	// error), nil otherwise.
	Error []byte
	// Object is "text_completion" normally, "error" for vLLM's and
	// SGLang's error object, whose text is Message.
	Object, Message jsonpick.Text
	// Timings is the raw JSON of llama.cpp's "timings", nil when absent
	// or null.
	Timings []byte
}

// IsErrorObject reports whether the event is an error object rather than
// a chunk: its "object" is "error".
func (e *Event) IsErrorObject() bool { return e.Object.Is("error") }

var schema = jsonpick.Compile(
	jsonpick.Objs("choices", jsonpick.Str("text"), jsonpick.Str("finish_reason")),
	jsonpick.Obj("usage",
		jsonpick.Count("prompt_tokens"),
		jsonpick.Count("completion_tokens"),
		jsonpick.Count("total_tokens"),
		jsonpick.Obj("prompt_tokens_details", jsonpick.Count("cached_tokens"))),
	jsonpick.Raw("error"),
	jsonpick.Str("object"),
	jsonpick.Str("message"),
	jsonpick.Raw("timings"),
)

var (
	sChoices    = schema.Slot("choices")
	sText       = schema.Slot("choices.text")
	sFinish     = schema.Slot("choices.finish_reason")
	sUsage      = schema.Slot("usage")
	sPrompt     = schema.Slot("usage.prompt_tokens")
	sCompletion = schema.Slot("usage.completion_tokens")
	sTotal      = schema.Slot("usage.total_tokens")
	sCached     = schema.Slot("usage.prompt_tokens_details.cached_tokens")
	sError      = schema.Slot("error")
	sObject     = schema.Slot("object")
	sMessage    = schema.Slot("message")
	sTimings    = schema.Slot("timings")
)

// A Decoder decodes the events of one stream, one after the other. The
// zero value is not ready: use NewDecoder. A Decoder is not safe for
// concurrent use.
type Decoder struct {
	d       *jsonpick.Decoder
	choices []Choice
	ev      Event
	// built: ev is d's last payload's, so that a payload that repeats it
	// (jsonpick's Decoder.Again) changes only its bytes.
	built bool
}

// NewDecoder returns a Decoder.
func NewDecoder() *Decoder { return &Decoder{d: jsonpick.NewDecoder(schema).Repeat(sText)} }

// Decode decodes one event's data. It returns jsonpick.ErrNotObject,
// jsonpick.ErrTrailingData or a *jsonpick.MalformedError when the data is
// neither null nor exactly one JSON object. The event and its byte slices
// are valid until the next call.
func (d *Decoder) Decode(data []byte) (*Event, error) {
	if string(bytes.TrimSpace(data)) == "null" {
		clear(d.choices)
		d.choices, d.built = d.choices[:0], false
		d.ev = Event{Null: true}
		return &d.ev, nil
	}
	err := d.d.Decode(data)
	if err == nil && d.built && d.d.Again() {
		// The last chunk's shape: its event but for the bytes.
		v, e, c, moved := d.d.Value, &d.ev, &d.choices[0], jsonpick.Moved
		moved(&c.Text.Bytes, d.d.Elem(sText, 0))
		moved(&c.FinishReason.Bytes, d.d.Elem(sFinish, 0))
		moved(&e.Error, v(sError))
		moved(&e.Object.Bytes, v(sObject))
		moved(&e.Message.Bytes, v(sMessage))
		moved(&e.Timings, v(sTimings))
		return e, nil
	}
	clear(d.choices)
	d.choices, d.built = d.choices[:0], false
	if err != nil {
		return nil, err
	}
	d.built = true
	v := d.d.Value
	for i := range v(sChoices).Len {
		d.choices = append(d.choices, Choice{Text: d.d.Elem(sText, i).Text(), FinishReason: d.d.Elem(sFinish, i).Text()})
	}
	d.ev = Event{Choices: d.choices, Error: v(sError).Bytes, Object: v(sObject).Text(), Message: v(sMessage).Text(),
		Timings: v(sTimings).Bytes}
	if v(sUsage).Kind == jsonpick.Object {
		d.ev.Usage = Usage{Present: true, Prompt: v(sPrompt).Int, Completion: v(sCompletion).Int,
			Total: v(sTotal).Int, Cached: v(sCached).Int}
	}
	return &d.ev, nil
}

// Fallbacks returns the number of payloads decoded by encoding/json so far.
func (d *Decoder) Fallbacks() int { return d.d.Fallbacks() }

// Repeats returns the number of events decoded as repeats of an earlier
// event's shape (package jsonpick's Decoder.Repeat): every text delta of
// a stream after its first, normally.
func (d *Decoder) Repeats() int { return d.d.Repeats() }

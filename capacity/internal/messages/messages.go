// Package messages decodes the events of an Anthropic Messages stream
// (POST /v1/messages with "stream": true) into what the measurement
// protocol reads of each, without a general encoding/json decode and
// without allocating in steady state (package jsonpick, whose rules of
// equivalence with encoding/json, fallback and aliasing apply).
//
// # What an event is
//
// The data of every event is one JSON object whose "type" names it, as
// does the SSE event line. The event's Kind:
//
//   - MessageStart: "message_start"; message.usage holds the input counts
//     (input_tokens, cache_read_input_tokens, cache_creation_input_tokens;
//     Ollama's input_tokens here is an estimate it corrects in
//     message_delta).
//   - BlockStart: "content_block_start"; content_block.type is "text" or
//     "thinking" (or "tool_use", ...), and its text or thinking, normally
//     empty, is already output when it is not.
//   - Text: "content_block_delta" whose delta.type is "text_delta": Text
//     is delta.text, visible.
//   - Thinking: "content_block_delta" whose delta.type is
//     "thinking_delta": Text is delta.thinking, reasoning.
//   - Delta: any other content_block_delta ("signature_delta",
//     "input_json_delta", "citations_delta"): no text.
//   - BlockStop: "content_block_stop".
//   - MessageDelta: "message_delta": delta.stop_reason and usage
//     (output_tokens; Ollama adds the real input_tokens).
//   - MessageStop: "message_stop", the end of the stream.
//   - Ping: "ping": activity, not output.
//   - Error: "type" "error" (Anthropic's {"type":"error","error":{...}}),
//     or an SSE event named "error" whatever its data (llama.cpp's
//     {"code":500,"message":...,"type":"server_error"}).
//   - Other: any other type.
//
// Of the payload the decoder keeps: type; message.usage (of message_start);
// content_block's type, text and thinking; delta's type, text, thinking and
// stop_reason; usage (of message_delta); error (raw); and a top-level
// "message" that is a string (llama.cpp's error). Every other member is
// validated and skipped.
package messages

import (
	"github.com/anvilbench/anvil/capacity/internal/jsonpick"
)

// Kind is what an event is to the client.
type Kind uint8

// The kinds of event.
const (
	Other Kind = iota
	MessageStart
	BlockStart
	Text
	Thinking
	Delta
	BlockStop
	MessageDelta
	MessageStop
	Ping
	Error
)

var kindNames = [...]string{"other", "message_start", "content_block_start", "text", "thinking", "delta",
	"content_block_stop", "message_delta", "message_stop", "ping", "error"}

// String returns the kind's name.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(?)"
}

// The event and delta types the package reads.
const (
	TypeMessageStart      = "message_start"
	TypeContentBlockStart = "content_block_start"
	TypeContentBlockDelta = "content_block_delta"
	TypeContentBlockStop  = "content_block_stop"
	TypeMessageDelta      = "message_delta"
	TypeMessageStop       = "message_stop"
	TypePing              = "ping"
	TypeError             = "error"

	DeltaText     = "text_delta"
	DeltaThinking = "thinking_delta"
)

// kindOf returns the kind of an event type; a content_block_delta is
// Delta until its delta's type is read.
func kindOf(t []byte) Kind {
	switch string(t) {
	case TypeMessageStart:
		return MessageStart
	case TypeContentBlockStart:
		return BlockStart
	case TypeContentBlockDelta:
		return Delta
	case TypeContentBlockStop:
		return BlockStop
	case TypeMessageDelta:
		return MessageDelta
	case TypeMessageStop:
		return MessageStop
	case TypePing:
		return Ping
	case TypeError:
		return Error
	}
	return Other
}

// Usage is the usage object of message_start (message.usage) or of
// message_delta (usage).
type Usage struct {
	// Present: the usage object is an object (not absent, not null).
	Present bool
	// Input is input_tokens: the prompt tokens not read from the cache
	// (Anthropic, llama.cpp); Ollama counts the whole prompt and reports
	// no cache.
	Input jsonpick.Int
	// Output is output_tokens.
	Output jsonpick.Int
	// CacheRead and CacheCreation are cache_read_input_tokens and
	// cache_creation_input_tokens.
	CacheRead, CacheCreation jsonpick.Int
}

// Event is what is kept of one event.
type Event struct {
	Kind Kind
	// Type is the data's "type" member.
	Type jsonpick.Text
	// Text is a Text event's delta.text or a Thinking event's
	// delta.thinking; for a BlockStart, content_block.text (a text block)
	// or content_block.thinking (a thinking block).
	Text jsonpick.Text
	// BlockType is a BlockStart's content_block.type, DeltaType a
	// content_block_delta's delta.type.
	BlockType, DeltaType jsonpick.Text
	// StopReason is a MessageDelta's delta.stop_reason.
	StopReason jsonpick.Text
	// Usage is message.usage when "message" is an object (message_start),
	// else usage (message_delta).
	Usage Usage
	// Error is the raw JSON of the "error" member when not null.
	Error []byte
	// Message is the top-level "message" when it is a string (llama.cpp's
	// error event: {"code":500,"message":...,"type":"server_error"}).
	Message jsonpick.Text
}

// usage is the members of a usage object.
func usage(name string) jsonpick.Member {
	return jsonpick.Obj(name,
		jsonpick.Count("input_tokens"),
		jsonpick.Count("output_tokens"),
		jsonpick.Count("cache_read_input_tokens"),
		jsonpick.Count("cache_creation_input_tokens"))
}

// schema is the members the decoder reads. "message" is an object in
// message_start and a string in llama.cpp's error event, so it is kept raw
// and read again with messageSchema when it is an object.
var (
	schema = jsonpick.Compile(
		jsonpick.Str("type"),
		jsonpick.Raw("message"),
		jsonpick.Obj("content_block", jsonpick.Str("type"), jsonpick.Str("text"), jsonpick.Str("thinking")),
		jsonpick.Obj("delta", jsonpick.Str("type"), jsonpick.Str("text"), jsonpick.Str("thinking"), jsonpick.Str("stop_reason")),
		usage("usage"),
		jsonpick.Raw("error"),
	)
	messageSchema = jsonpick.Compile(usage("usage"))
)

var (
	sType          = schema.Slot("type")
	sMessage       = schema.Slot("message")
	sBlockType     = schema.Slot("content_block.type")
	sBlockText     = schema.Slot("content_block.text")
	sBlockThinking = schema.Slot("content_block.thinking")
	sDeltaType     = schema.Slot("delta.type")
	sDeltaText     = schema.Slot("delta.text")
	sDeltaThinking = schema.Slot("delta.thinking")
	sStopReason    = schema.Slot("delta.stop_reason")
	sError         = schema.Slot("error")
	topUsage       = usageSlotsOf(schema)
	messageUsage   = usageSlotsOf(messageSchema)
)

// usageSlots are the slots of the members of a usage object.
type usageSlots struct{ obj, input, output, cacheRead, creation jsonpick.Slot }

// usageSlotsOf returns the slots of the usage object "usage" of s.
func usageSlotsOf(s *jsonpick.Schema) usageSlots {
	return usageSlots{s.Slot("usage"), s.Slot("usage.input_tokens"), s.Slot("usage.output_tokens"),
		s.Slot("usage.cache_read_input_tokens"), s.Slot("usage.cache_creation_input_tokens")}
}

// read returns the usage object d decoded.
func (u usageSlots) read(d *jsonpick.Decoder) Usage {
	if d.Value(u.obj).Kind != jsonpick.Object {
		return Usage{}
	}
	return Usage{Present: true, Input: d.Value(u.input).Int, Output: d.Value(u.output).Int,
		CacheRead: d.Value(u.cacheRead).Int, CacheCreation: d.Value(u.creation).Int}
}

// A Decoder decodes the events of one stream, one after the other. The
// zero value is not ready: use NewDecoder. A Decoder is not safe for
// concurrent use.
type Decoder struct {
	d, msg *jsonpick.Decoder
	buf    []byte // an escaped top-level message, unescaped
	ev     Event
	// name is the last event's name and text the slot of its Text (when not
	// none), for an event that repeats it (jsonpick's
	// Decoder.Again): its Event is the last one's but for the bytes.
	name     []byte
	textSlot jsonpick.Slot
	none     bool
}

// NewDecoder returns a Decoder.
func NewDecoder() *Decoder {
	return &Decoder{d: jsonpick.NewDecoder(schema).Repeat(sDeltaText, sDeltaThinking), msg: jsonpick.NewDecoder(messageSchema)}
}

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
		moved(&e.BlockType.Bytes, v(sBlockType))
		moved(&e.DeltaType.Bytes, v(sDeltaType))
		moved(&e.StopReason.Bytes, v(sStopReason))
		moved(&e.Error, v(sError))
		if m := v(sMessage); m.Kind == jsonpick.String {
			e.Message = d.text(m.Bytes)
		}
		if !d.none {
			moved(&e.Text.Bytes, v(d.textSlot))
		}
		return e, nil
	}
	d.name = append(d.name[:0], name...)
	d.ev = Event{
		Type:       v(sType).Text(),
		BlockType:  v(sBlockType).Text(),
		DeltaType:  v(sDeltaType).Text(),
		StopReason: v(sStopReason).Text(),
		Usage:      topUsage.read(d.d),
		Error:      v(sError).Bytes,
	}
	switch m := v(sMessage); m.Kind {
	case jsonpick.Object:
		// A valid object; the decode fails only when message.usage is not
		// an object (nor null), which leaves the top-level usage.
		if d.msg.Decode(m.Bytes) == nil {
			d.ev.Usage = messageUsage.read(d.msg)
		}
	case jsonpick.String:
		d.ev.Message = d.text(m.Bytes)
	}
	if d.ev.Type.Kind == jsonpick.String {
		d.ev.Kind = kindOf(d.ev.Type.Bytes)
	} else {
		d.ev.Kind = kindOf(name)
	}
	if string(name) == TypeError {
		d.ev.Kind = Error
	}
	d.none = false
	switch d.ev.Kind {
	case BlockStart:
		d.textSlot = sBlockText
		if d.ev.BlockType.Is("thinking") {
			d.textSlot = sBlockThinking
		}
	case Delta:
		switch {
		case d.ev.DeltaType.Is(DeltaText):
			d.ev.Kind, d.textSlot = Text, sDeltaText
		case d.ev.DeltaType.Is(DeltaThinking):
			d.ev.Kind, d.textSlot = Thinking, sDeltaThinking
		default:
			d.none = true
		}
	default:
		d.none = true
	}
	if !d.none {
		d.ev.Text = v(d.textSlot).Text()
	}
	return &d.ev, nil
}

// text returns the text of a valid JSON string q (quotes included).
func (d *Decoder) text(q []byte) jsonpick.Text {
	s := q[1 : len(q)-1]
	for _, c := range s {
		if c == '\\' {
			d.buf = jsonpick.AppendUnescaped(d.buf[:0], s)
			return jsonpick.Text{Kind: jsonpick.String, Bytes: d.buf}
		}
	}
	return jsonpick.Text{Kind: jsonpick.String, Bytes: s}
}

// Fallbacks returns the number of payloads decoded by encoding/json so far.
func (d *Decoder) Fallbacks() int { return d.d.Fallbacks() + d.msg.Fallbacks() }

// ErrorMessage returns the server's message of an Error event: the
// "message" of its error object ({"type":"error","error":{"message":...}}),
// else the top-level message (llama.cpp), else the error's JSON text; ""
// when there is none. It allocates: it is for the one event that ends a
// stream.
func (e *Event) ErrorMessage() string {
	if e.Error != nil {
		if m, ok := jsonpick.Message(e.Error); ok {
			return m
		}
	}
	if e.Message.NonEmpty() {
		return string(e.Message.Bytes)
	}
	return string(e.Error)
}

// Repeats returns the number of events decoded as repeats of an earlier
// event's shape (package jsonpick's Decoder.Repeat): every text delta of
// a stream after its first, normally.
func (d *Decoder) Repeats() int { return d.d.Repeats() }

package messages

import (
	"encoding/json"

	"github.com/anvilbench/anvil/capacity/internal/jsonpick"
	"github.com/anvilbench/anvil/capacity/internal/jsonpick/pickref"
)

type refUsage struct {
	InputTokens              json.RawMessage `json:"input_tokens"`
	OutputTokens             json.RawMessage `json:"output_tokens"`
	CacheReadInputTokens     json.RawMessage `json:"cache_read_input_tokens"`
	CacheCreationInputTokens json.RawMessage `json:"cache_creation_input_tokens"`
}

// refEvent is the schema as structs for encoding/json.
type refEvent struct {
	Type         json.RawMessage `json:"type"`
	Message      json.RawMessage `json:"message"`
	ContentBlock *struct {
		Type     json.RawMessage `json:"type"`
		Text     json.RawMessage `json:"text"`
		Thinking json.RawMessage `json:"thinking"`
	} `json:"content_block"`
	Delta *struct {
		Type       json.RawMessage `json:"type"`
		Text       json.RawMessage `json:"text"`
		Thinking   json.RawMessage `json:"thinking"`
		StopReason json.RawMessage `json:"stop_reason"`
	} `json:"delta"`
	Usage *refUsage       `json:"usage"`
	Error json.RawMessage `json:"error"`
}

var refKinds = map[string]Kind{
	"message_start": MessageStart, "content_block_start": BlockStart, "content_block_delta": Delta,
	"content_block_stop": BlockStop, "message_delta": MessageDelta, "message_stop": MessageStop,
	"ping": Ping, "error": Error,
}

func refUsageOf(u *refUsage) Usage {
	if u == nil {
		return Usage{}
	}
	return Usage{Present: true, Input: pickref.Int(u.InputTokens), Output: pickref.Int(u.OutputTokens),
		CacheRead: pickref.Int(u.CacheReadInputTokens), CacheCreation: pickref.Int(u.CacheCreationInputTokens)}
}

// reference decodes an event with encoding/json.
func reference(name string, data []byte) (*Event, error) {
	var r refEvent
	if err := pickref.Decode(data, &r); err != nil {
		return nil, err
	}
	e := &Event{Type: pickref.Text(r.Type), Usage: refUsageOf(r.Usage)}
	_, e.Error = pickref.Raw(r.Error)
	switch pickref.Kind(r.Message) {
	case jsonpick.Object:
		var m struct {
			Usage *refUsage `json:"usage"`
		}
		// A message.usage that is not an object (a type error) leaves
		// the top-level usage.
		if json.Unmarshal(r.Message, &m) == nil {
			e.Usage = refUsageOf(m.Usage)
		}
	case jsonpick.String:
		e.Message = pickref.Text(r.Message)
	}
	var blockText, blockThinking, deltaText, deltaThinking jsonpick.Text
	if b := r.ContentBlock; b != nil {
		e.BlockType, blockText, blockThinking = pickref.Text(b.Type), pickref.Text(b.Text), pickref.Text(b.Thinking)
	}
	if dl := r.Delta; dl != nil {
		e.DeltaType, e.StopReason = pickref.Text(dl.Type), pickref.Text(dl.StopReason)
		deltaText, deltaThinking = pickref.Text(dl.Text), pickref.Text(dl.Thinking)
	}
	if e.Type.Kind == jsonpick.String {
		e.Kind = refKinds[string(e.Type.Bytes)]
	} else {
		e.Kind = refKinds[name]
	}
	if name == "error" {
		e.Kind = Error
	}
	switch e.Kind {
	case BlockStart:
		e.Text = blockText
		if e.BlockType.Kind == jsonpick.String && string(e.BlockType.Bytes) == "thinking" {
			e.Text = blockThinking
		}
	case Delta:
		switch {
		case e.DeltaType.Kind == jsonpick.String && string(e.DeltaType.Bytes) == "text_delta":
			e.Kind, e.Text = Text, deltaText
		case e.DeltaType.Kind == jsonpick.String && string(e.DeltaType.Bytes) == "thinking_delta":
			e.Kind, e.Text = Thinking, deltaThinking
		}
	}
	return e, nil
}

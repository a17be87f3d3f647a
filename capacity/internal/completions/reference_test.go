package completions

import (
	"bytes"
	"encoding/json"

	"github.com/anvilbench/anvil/capacity/internal/jsonpick/pickref"
)

// refEvent is the schema as structs for encoding/json.
type refEvent struct {
	Choices []struct {
		Text         json.RawMessage `json:"text"`
		FinishReason json.RawMessage `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        json.RawMessage `json:"prompt_tokens"`
		CompletionTokens    json.RawMessage `json:"completion_tokens"`
		TotalTokens         json.RawMessage `json:"total_tokens"`
		PromptTokensDetails *struct {
			CachedTokens json.RawMessage `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Error   json.RawMessage `json:"error"`
	Object  json.RawMessage `json:"object"`
	Message json.RawMessage `json:"message"`
	Timings json.RawMessage `json:"timings"`
}

// reference decodes an event with encoding/json.
func reference(data []byte) (*Event, error) {
	if string(bytes.TrimSpace(data)) == "null" {
		return &Event{Null: true}, nil
	}
	var r refEvent
	if err := pickref.Decode(data, &r); err != nil {
		return nil, err
	}
	e := &Event{Object: pickref.Text(r.Object), Message: pickref.Text(r.Message)}
	_, e.Error = pickref.Raw(r.Error)
	_, e.Timings = pickref.Raw(r.Timings)
	for _, c := range r.Choices {
		e.Choices = append(e.Choices, Choice{Text: pickref.Text(c.Text), FinishReason: pickref.Text(c.FinishReason)})
	}
	if u := r.Usage; u != nil {
		e.Usage = Usage{Present: true, Prompt: pickref.Int(u.PromptTokens), Completion: pickref.Int(u.CompletionTokens),
			Total: pickref.Int(u.TotalTokens)}
		if u.PromptTokensDetails != nil {
			e.Usage.Cached = pickref.Int(u.PromptTokensDetails.CachedTokens)
		}
	}
	return e, nil
}

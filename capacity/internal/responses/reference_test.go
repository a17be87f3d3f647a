package responses

import (
	"encoding/json"

	"github.com/anvilbench/anvil/capacity/internal/jsonpick"
	"github.com/anvilbench/anvil/capacity/internal/jsonpick/pickref"
)

// refEvent is the schema as structs for encoding/json.
type refEvent struct {
	Type     json.RawMessage `json:"type"`
	Delta    json.RawMessage `json:"delta"`
	Response *struct {
		Status json.RawMessage `json:"status"`
		Usage  *struct {
			InputTokens        json.RawMessage `json:"input_tokens"`
			OutputTokens       json.RawMessage `json:"output_tokens"`
			TotalTokens        json.RawMessage `json:"total_tokens"`
			InputTokensDetails *struct {
				CachedTokens json.RawMessage `json:"cached_tokens"`
			} `json:"input_tokens_details"`
			OutputTokensDetails *struct {
				ReasoningTokens json.RawMessage `json:"reasoning_tokens"`
			} `json:"output_tokens_details"`
		} `json:"usage"`
		IncompleteDetails *struct {
			Reason json.RawMessage `json:"reason"`
		} `json:"incomplete_details"`
		Error json.RawMessage `json:"error"`
	} `json:"response"`
	Error   json.RawMessage `json:"error"`
	Message json.RawMessage `json:"message"`
	Code    json.RawMessage `json:"code"`
	Timings json.RawMessage `json:"timings"`
}

// refKinds is the kind of each event type the package documents.
var refKinds = map[string]Kind{
	"response.output_text.delta":            Text,
	"response.refusal.delta":                Text,
	"response.reasoning_text.delta":         Reasoning,
	"response.reasoning_summary_text.delta": Reasoning,
	"response.completed":                    Completed,
	"response.incomplete":                   Incomplete,
	"response.failed":                       Failed,
	"error":                                 Error,
}

func raw(r json.RawMessage) []byte {
	_, b := pickref.Raw(r)
	return b
}

// reference decodes an event with encoding/json.
func reference(name string, data []byte) (*Event, error) {
	var r refEvent
	if err := pickref.Decode(data, &r); err != nil {
		return nil, err
	}
	e := &Event{Type: pickref.Text(r.Type), Delta: pickref.Text(r.Delta), Error: raw(r.Error),
		Message: pickref.Text(r.Message), Code: raw(r.Code), Timings: raw(r.Timings)}
	if rs := r.Response; rs != nil {
		e.Status = pickref.Text(rs.Status)
		if e.Error == nil {
			e.Error = raw(rs.Error)
		}
		if id := rs.IncompleteDetails; id != nil {
			e.IncompleteReason = pickref.Text(id.Reason)
		}
		if u := rs.Usage; u != nil {
			e.Usage = Usage{Present: true, Input: pickref.Int(u.InputTokens), Output: pickref.Int(u.OutputTokens),
				Total: pickref.Int(u.TotalTokens)}
			if u.InputTokensDetails != nil {
				e.Usage.Cached = pickref.Int(u.InputTokensDetails.CachedTokens)
			}
			if u.OutputTokensDetails != nil {
				e.Usage.Reasoning = pickref.Int(u.OutputTokensDetails.ReasoningTokens)
			}
		}
	}
	switch {
	case name == "error" || raw(r.Error) != nil:
		e.Kind = Error
	case e.Type.Kind == jsonpick.String:
		e.Kind = refKinds[string(e.Type.Bytes)]
	default:
		e.Kind = refKinds[name]
	}
	return e, nil
}

package chunk

import (
	"bytes"
	"encoding/json"

	"github.com/anvilbench/anvil/capacity/internal/jsonpick"
)

// The structs encoding/json decodes a payload into when the fast path gives
// up. They hold the same members as the fast path, each leaf kept raw and
// then read by the same code as the fast path's leaves; json.RawMessage
// decodes exactly like the client's own leaf types (every one is a
// json.Unmarshaler that accepts any value), so the structure, the
// name matching, duplicates and type errors are encoding/json's.
type (
	wireChunk struct {
		Choices []wireChoice    `json:"choices"`
		Usage   *wireUsage      `json:"usage"`
		Error   json.RawMessage `json:"error"`
		Object  json.RawMessage `json:"object"`
		Message json.RawMessage `json:"message"`
		Timings json.RawMessage `json:"timings"`
	}
	wireChoice struct {
		Delta struct {
			Content          json.RawMessage `json:"content"`
			Role             json.RawMessage `json:"role"`
			ReasoningContent json.RawMessage `json:"reasoning_content"`
			Reasoning        json.RawMessage `json:"reasoning"`
		} `json:"delta"`
		FinishReason json.RawMessage `json:"finish_reason"`
	}
	wireUsage struct {
		PromptTokens        json.RawMessage `json:"prompt_tokens"`
		CompletionTokens    json.RawMessage `json:"completion_tokens"`
		TotalTokens         json.RawMessage `json:"total_tokens"`
		PromptTokensDetails *struct {
			CachedTokens json.RawMessage `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	}
)

// fallback decodes data, trimmed and beginning with '{', with a
// json.Decoder, as the stream client did: the first error of the decoder
// (syntax, then type), else ErrTrailingData when the object does not end
// the payload.
func (d *Decoder) fallback(data []byte) (*Chunk, error) {
	var w wireChunk
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&w); err != nil {
		return nil, &MalformedError{Err: err}
	}
	if dec.InputOffset() != int64(len(data)) {
		return nil, ErrTrailingData
	}
	for ci := range w.Choices {
		wc := &w.Choices[ci]
		d.choices = append(d.choices, Choice{
			ReasoningContent: nonEmptyString(wc.Delta.ReasoningContent),
			Reasoning:        nonEmptyString(wc.Delta.Reasoning),
		})
		d.setRawText(ci, fContent, wc.Delta.Content)
		d.setRawText(ci, fRole, wc.Delta.Role)
		d.setRawText(ci, fFinish, wc.FinishReason)
	}
	if u := w.Usage; u != nil {
		d.chunk.Usage = Usage{Present: true,
			PromptTokens:     d.rawInt(u.PromptTokens),
			CompletionTokens: d.rawInt(u.CompletionTokens),
			TotalTokens:      d.rawInt(u.TotalTokens),
		}
		if pd := u.PromptTokensDetails; pd != nil {
			d.chunk.Usage.CachedTokens = d.rawInt(pd.CachedTokens)
		}
	}
	if len(w.Error) > 0 && string(w.Error) != "null" {
		d.chunk.Error = w.Error
	}
	if len(w.Timings) > 0 && string(w.Timings) != "null" {
		d.chunk.Timings = w.Timings
	}
	d.setRawText(noChoice, fObject, w.Object)
	d.setRawText(noChoice, fMessage, w.Message)
	d.finish()
	return &d.chunk, nil
}

// nonEmptyString reports whether a raw value is a string other than "".
func nonEmptyString(raw json.RawMessage) bool { return len(raw) > 2 && raw[0] == '"' }

// setRawText sets a Text member of choice ci from its raw value, empty when
// the member was absent.
func (d *Decoder) setRawText(ci int, f int, raw json.RawMessage) {
	switch {
	case len(raw) == 0:
	case raw[0] == '"':
		s := raw[1 : len(raw)-1]
		d.setString(ci, f, s, bytes.IndexByte(s, '\\') >= 0)
	default:
		d.textField(ci, f).Kind = jsonpick.KindOf(raw[0])
	}
}

// rawInt returns the count of a raw value, IntAbsent when the member was
// absent.
func (d *Decoder) rawInt(raw json.RawMessage) Int {
	if len(raw) == 0 {
		return Int{}
	}
	n, buf := jsonpick.ParseInt(raw, d.buf)
	d.buf = buf
	return n
}

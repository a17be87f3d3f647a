package chunk

import (
	"bytes"
	"encoding/json"

	"github.com/anvilbench/anvil/capacity/internal/chunk/legacychunk"
	"github.com/anvilbench/anvil/capacity/internal/jsonpick/pickref"
)

// The reference decoder: the stream client's decoding as it stood in
// capacity/client_chunk.go (its leaf types, package legacychunk, and its
// structs, verbatim but for their names, plus delta.role read as the
// client reads text), and an independent classification of each leaf's
// raw value with encoding/json. The fast decoder must agree with both for
// every payload.

type legacyChunk struct {
	Choices []legacyChoice     `json:"choices"`
	Usage   *legacyUsage       `json:"usage"`
	Error   json.RawMessage    `json:"error"`
	Object  legacychunk.String `json:"object"`
	Message legacychunk.String `json:"message"`
	Timings json.RawMessage    `json:"timings"`
}

type legacyChoice struct {
	Delta struct {
		Content          legacychunk.String   `json:"content"`
		Role             legacychunk.String   `json:"role"`
		ReasoningContent legacychunk.NonEmpty `json:"reasoning_content"`
		Reasoning        legacychunk.NonEmpty `json:"reasoning"`
	} `json:"delta"`
	FinishReason legacychunk.String `json:"finish_reason"`
}

type legacyUsage struct {
	PromptTokens        legacychunk.Int `json:"prompt_tokens"`
	CompletionTokens    legacychunk.Int `json:"completion_tokens"`
	TotalTokens         legacychunk.Int `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens legacychunk.Int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// rawChunk has the same shape with every leaf raw, to classify the leaves.
type rawChunk struct {
	Object  json.RawMessage `json:"object"`
	Message json.RawMessage `json:"message"`
	Choices []struct {
		Delta struct {
			Content json.RawMessage `json:"content"`
			Role    json.RawMessage `json:"role"`
		} `json:"delta"`
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
}

// decodeLegacy is the client's chunkDecoder.decode for one payload, its
// errors this package's.
func decodeLegacy(data []byte, c any) error {
	switch err := legacychunk.Decode(data, c); err {
	case legacychunk.ErrNotObject:
		return ErrNotObject
	case legacychunk.ErrTrailingData:
		return ErrTrailingData
	default:
		return err
	}
}

// refResult is the reference's answer for one payload, in the fast
// decoder's types.
type refResult struct {
	chunk *Chunk
	err   error
}

// decodeReference decodes data with the reference.
func decodeReference(data []byte) refResult {
	var lc legacyChunk
	if err := decodeLegacy(data, &lc); err != nil {
		return refResult{err: err}
	}
	var rc rawChunk
	if err := decodeLegacy(data, &rc); err != nil {
		panic("raw decode disagrees with the legacy decode: " + err.Error())
	}
	c := &Chunk{}
	for i, lch := range lc.Choices {
		rch := rc.Choices[i]
		c.Choices = append(c.Choices, Choice{
			Content:          refText(lch.Delta.Content, rch.Delta.Content),
			Role:             refText(lch.Delta.Role, rch.Delta.Role),
			FinishReason:     refText(lch.FinishReason, rch.FinishReason),
			ReasoningContent: bool(lch.Delta.ReasoningContent),
			Reasoning:        bool(lch.Delta.Reasoning),
		})
	}
	if lu := lc.Usage; lu != nil {
		ru := rc.Usage
		c.Usage = Usage{Present: true,
			PromptTokens:     refCount(lu.PromptTokens, ru.PromptTokens),
			CompletionTokens: refCount(lu.CompletionTokens, ru.CompletionTokens),
			TotalTokens:      refCount(lu.TotalTokens, ru.TotalTokens),
		}
		if lu.PromptTokensDetails != nil {
			c.Usage.CachedTokens = refCount(lu.PromptTokensDetails.CachedTokens, ru.PromptTokensDetails.CachedTokens)
		}
	}
	// The client's hasError: a non-empty raw value other than null.
	if len(lc.Error) > 0 && !bytes.Equal(lc.Error, []byte("null")) {
		c.Error = lc.Error
	}
	if len(lc.Timings) > 0 && !bytes.Equal(lc.Timings, []byte("null")) {
		c.Timings = lc.Timings
	}
	c.Object, c.Message = refText(lc.Object, rc.Object), refText(lc.Message, rc.Message)
	return refResult{chunk: c}
}

// refText is the client's text with the kind of its raw value.
func refText(s legacychunk.String, raw json.RawMessage) Text {
	k := pickref.Kind(raw)
	if k != String {
		if s != "" {
			panic("the legacy decoder has text for a non-string")
		}
		return Text{Kind: k}
	}
	return Text{Kind: String, Bytes: []byte(s)}
}

// refCount is the independent classification, checked against the
// client's own acceptance.
func refCount(n legacychunk.Int, raw json.RawMessage) Int {
	r := pickref.Int(raw)
	if v, ok := r.Int64(); ok != n.OK || (ok && v != n.V) {
		panic("the classification disagrees with the client's wireInt")
	}
	return r
}

// sameError reports whether the fast decoder's error is the reference's.
func sameError(got, want error) bool { return pickref.SameError(got, want) }

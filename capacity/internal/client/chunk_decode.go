package client

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/chunk"
)

// wireInt is a usage count as the client reads it. null and absent leave it
// unset; an integer (also one written with a fraction of zero or an
// exponent, such as 24.0) that fits int64 sets it; any other value (a
// fraction, a string, a boolean, an object, a number beyond int64) is kept
// as its JSON text in bad, so that the usage check can name it (see
// checkUsage).
type wireInt struct {
	v   int64
	ok  bool
	bad string // the JSON text of a present value that is not an integer, bounded
}

// MaxBadUsageText bounds the JSON text of a bad usage value quoted in its
// failure message, cut after the credentials were scrubbed from it.
const MaxBadUsageText = 64

// maxBadUsageKept bounds the JSON text of a bad usage value kept while
// reading, before it is scrubbed and cut at MaxBadUsageText: a credential
// this cut leaves in part starts beyond MaxBadUsageText unless it is longer
// than 900 bytes, so no part of one reaches the message.
const maxBadUsageKept = 1024

// UnmarshalJSON implements json.Unmarshaler. b is one valid JSON value.
func (n *wireInt) UnmarshalJSON(b []byte) error {
	*n = wireInt{}
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	if b[0] == '-' || (b[0] >= '0' && b[0] <= '9') {
		if i, err := strconv.ParseInt(string(b), 10, 64); err == nil {
			*n = wireInt{v: i, ok: true}
			return nil
		}
		// Exactly representable integers up to 2^53 written as floats.
		if f, err := strconv.ParseFloat(string(b), 64); err == nil && f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
			*n = wireInt{v: int64(f), ok: true}
			return nil
		}
	}
	bad, cut := CutOnRune(string(b), maxBadUsageKept)
	if cut {
		bad += "..."
	}
	n.bad = bad
	return nil
}

// chunkUsage is the usage object read with encoding/json: the slow path of
// a usage count that is not a plain integer literal (see usageOf).
type chunkUsage struct {
	PromptTokens        wireInt `json:"prompt_tokens"`
	CompletionTokens    wireInt `json:"completion_tokens"`
	TotalTokens         wireInt `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens wireInt `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// chunkDecoder decodes the data of a stream's events one after the other
// with the allocation-free decoder of package chunk (which hands anything
// unusual to encoding/json itself, with the same results). A chunk and its
// byte slices are valid until the next decode.
type chunkDecoder struct {
	dec chunk.Decoder
}

// decode parses one event's data: exactly one JSON object, else an error
// (errNotObject, errTrailingData, or encoding/json's own).
func (d *chunkDecoder) decode(data []byte) (*chunk.Chunk, error) {
	c, err := d.dec.Decode(data)
	switch err {
	case nil:
		return c, nil
	case chunk.ErrNotObject:
		return nil, errNotObject
	case chunk.ErrTrailingData:
		return nil, errTrailingData
	}
	return nil, err
}

// usageOf is what the client keeps of a chunk's usage. A count that is a
// plain integer literal (all a server normally writes) is taken from the
// fast decoder; any other value (24.0, 1e3, "12", true, an object) is
// read again from data with encoding/json into wireInt, so that what is
// accepted and the JSON text a failure quotes stay exactly the client's
// rules. That path runs at most once per stream (the usage chunk), and only
// for such a count.
func usageOf(u *chunk.Usage, data []byte) usageSeen {
	if !u.Present {
		return usageSeen{}
	}
	if plainCount(u.PromptTokens) && plainCount(u.CompletionTokens) && plainCount(u.TotalTokens) && plainCount(u.CachedTokens) {
		return usageSeen{present: true, prompt: fastCount(u.PromptTokens), completion: fastCount(u.CompletionTokens),
			total: fastCount(u.TotalTokens), cachedToks: fastCount(u.CachedTokens)}
	}
	var slow struct {
		Usage *chunkUsage `json:"usage"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(data), &slow); err != nil || slow.Usage == nil {
		// Unreachable: the fast decoder accepted the payload and found
		// usage an object. Counted as not reported rather than guessed.
		return usageSeen{present: true}
	}
	s := usageSeen{present: true, prompt: slow.Usage.PromptTokens, completion: slow.Usage.CompletionTokens, total: slow.Usage.TotalTokens}
	if d := slow.Usage.PromptTokensDetails; d != nil {
		s.cachedToks = d.CachedTokens
	}
	return s
}

// plainCount reports whether a count is absent, null or an unquoted
// integer literal within int64: the values whose meaning the fast decoder
// and wireInt agree on.
func plainCount(n chunk.Int) bool {
	switch n.Kind {
	case chunk.IntAbsent, chunk.IntNull:
		return true
	case chunk.IntInteger:
		return !n.Quoted
	}
	return false
}

// fastCount is a plain count (see plainCount) as a wireInt.
func fastCount(n chunk.Int) wireInt {
	if v, ok := n.Int64(); ok {
		return wireInt{v: v, ok: true}
	}
	return wireInt{}
}

// serverTimingsOf decodes the last "timings" object of a stream
// (llama.cpp's) into what anvil_go.requests[i].server_timings keeps; nil
// when there was none or it is not an object. A member that is absent or
// not a number is nil; a count that is not an integer is nil too.
func serverTimingsOf(raw []byte) *artifact.ServerTimings {
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	var t struct {
		CacheN      json.RawMessage `json:"cache_n"`
		PromptN     json.RawMessage `json:"prompt_n"`
		PromptMS    json.RawMessage `json:"prompt_ms"`
		PredictedN  json.RawMessage `json:"predicted_n"`
		PredictedMS json.RawMessage `json:"predicted_ms"`
	}
	if json.Unmarshal(raw, &t) != nil {
		return nil
	}
	return &artifact.ServerTimings{CacheN: timingCount(t.CacheN), PromptN: timingCount(t.PromptN), PromptMS: timingMS(t.PromptMS),
		PredictedN: timingCount(t.PredictedN), PredictedMS: timingMS(t.PredictedMS)}
}

// timingCount is a count of a timings object: a non-negative integer.
func timingCount(raw json.RawMessage) *int {
	var n wireInt
	if len(raw) == 0 || n.UnmarshalJSON(raw) != nil || !n.ok || n.v < 0 || n.v > math.MaxInt32 {
		return nil
	}
	v := int(n.v)
	return &v
}

// timingMS is a duration of a timings object: a finite non-negative
// number of milliseconds.
func timingMS(raw json.RawMessage) *float64 {
	var f float64
	if len(raw) == 0 || raw[0] == '"' || json.Unmarshal(raw, &f) != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return nil
	}
	return &f
}

package client

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// Count is a usage count as the client reads it. null and absent leave it
// unset; an integer (also one written with a fraction of zero or an
// exponent, such as 24.0) that fits int64 sets it; any other value (a
// fraction, a string, a boolean, an object, a number beyond int64) is kept
// as its JSON text in bad, so that the usage check can name it (see
// checkUsage).
type Count struct {
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
func (n *Count) UnmarshalJSON(b []byte) error {
	*n = Count{}
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	if b[0] == '-' || (b[0] >= '0' && b[0] <= '9') {
		if i, err := strconv.ParseInt(string(b), 10, 64); err == nil {
			*n = Count{v: i, ok: true}
			return nil
		}
		// Exactly representable integers up to 2^53 written as floats.
		if f, err := strconv.ParseFloat(string(b), 64); err == nil && f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
			*n = Count{v: int64(f), ok: true}
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
	var n Count
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

package discovery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/anvilbench/anvil/capacity/internal/client"
)

// maxModelsBody bounds the bytes of a /models answer the probe reads.
const maxModelsBody = 4 << 20

// contextLengthFields are the /models entry fields the context-limit probe
// reads, in order; the first holding a positive integer wins.
var contextLengthFields = [...]string{"max_model_len", "max_context_length", "context_length"}

// modelInfo is what the context-limit probe learned from GET {base}/models.
type modelInfo struct {
	// ID is the id of the entry used: the one equal to the requested model,
	// else the first.
	ID string
	// MaxModelLen is the first positive integer among the entry's
	// max_model_len, max_context_length and context_length (in that order),
	// else its meta.n_ctx (llama.cpp: the window of one slot, its
	// --ctx-size over --parallel); 0 when it has none.
	MaxModelLen int
	// Field is the field MaxModelLen came from ("meta.n_ctx" for
	// llama.cpp's); "" when it is 0.
	Field string
	// Listed is the ids of the answer's entries, in order ("" for an
	// entry with no string id).
	Listed []string
	// OutOfRange names the first of those fields that holds a number
	// outside 1..MaxWindow ("max_model_len 0"), "" when none does:
	// such a window is none.
	OutOfRange string
}

// probeModel asks GET {BaseURL}/models for the model to use and its
// context length (capacity/PROTOCOL.md#wire-protocol): the entry whose id
// equals cfg.Model, else the first entry. A 401, 403 or 404 answer wraps
// ErrRefused.
func probeModel(ctx context.Context, cfg Config) (modelInfo, error) {
	cl := cfg.Client
	req, err := cl.NewRequest(ctx, http.MethodGet, cfg.BaseURL+"/models", nil)
	if err != nil {
		return modelInfo{}, fmt.Errorf("capacity: model probe: %w", client.UnwrapURLError(err))
	}
	where := client.RedactedURL(req.URL)
	scrub := cl.Scrub
	resp, err := cl.Do(req)
	if err != nil {
		return modelInfo{}, fmt.Errorf("capacity: model probe GET %s: %s%s", where, scrub(client.UnwrapURLError(err).Error()), client.TransportHint(req.URL, cl.Transport(), client.UnwrapURLError(err)))
	}
	defer resp.Body.Close()
	decoded, err := client.DecodeBody(resp) // Target.Headers may ask for a compressed answer
	if err != nil {
		return modelInfo{}, fmt.Errorf("capacity: model probe GET %s: %s", where, scrub(err.Error()))
	}
	body, err := io.ReadAll(io.LimitReader(decoded, maxModelsBody))
	if err != nil {
		return modelInfo{}, fmt.Errorf("capacity: model probe GET %s: reading the answer: %s", where, scrub(err.Error()))
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusNotFound:
		return modelInfo{}, &refusedError{status: resp.StatusCode, msg: fmt.Sprintf("%v: model probe GET %s: HTTP %s: %s", ErrRefused, where, scrub(resp.Status), scrub(client.AnswerReason(resp, client.Excerpt(scrub(string(body))))))}
	case resp.StatusCode < 200 || resp.StatusCode >= 300:
		return modelInfo{}, fmt.Errorf("capacity: model probe GET %s: HTTP %s: %s", where, scrub(resp.Status), scrub(client.AnswerReason(resp, client.Excerpt(scrub(string(body))))))
	}
	info, err := parseModels(body, cfg.Model)
	if err != nil {
		return modelInfo{}, fmt.Errorf("capacity: model probe GET %s: %s", where, scrub(err.Error()))
	}
	return info, nil
}

// A refusedError is the error of a GET /models answered 401, 403 or 404:
// it wraps ErrRefused and keeps the status.
type refusedError struct {
	status int
	msg    string
}

func (e *refusedError) Error() string { return e.msg }
func (e *refusedError) Unwrap() error { return ErrRefused }

// notFound reports whether err is a GET /models answered 404.
func notFound(err error) bool {
	var r *refusedError
	return errors.As(err, &r) && r.status == http.StatusNotFound
}

// parseModels picks the entry of a /models answer and its context length.
func parseModels(body []byte, model string) (modelInfo, error) {
	var list struct {
		Data []map[string]json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return modelInfo{}, fmt.Errorf("the answer is not a model list: %w", err)
	}
	if len(list.Data) == 0 {
		return modelInfo{}, fmt.Errorf("the model list is empty")
	}
	entry := list.Data[0]
	for _, e := range list.Data {
		if model != "" && jsonString(e["id"]) == model {
			entry = e
			break
		}
	}
	info := modelInfo{ID: jsonString(entry["id"])}
	for _, e := range list.Data {
		info.Listed = append(info.Listed, jsonString(e["id"]))
	}
	if info.ID == "" {
		return modelInfo{}, fmt.Errorf("the model entry has no string id")
	}
	for _, k := range contextLengthFields {
		if info.window(entry[k], k) {
			return info, nil
		}
	}
	var meta struct {
		NCtx json.RawMessage `json:"n_ctx"`
	}
	if json.Unmarshal(entry["meta"], &meta) == nil {
		info.window(meta.NCtx, "meta.n_ctx")
	}
	return info, nil
}

// window sets MaxModelLen from the field named field when it holds a
// window in 1..maxContextTokens, and reports whether it did; a number
// outside that range is recorded in OutOfRange (the first one only).
func (info *modelInfo) window(raw json.RawMessage, field string) bool {
	if n, ok := windowInt(raw); ok {
		info.MaxModelLen, info.Field = n, field
		return true
	}
	if v, ok := jsonNumber(raw); ok && info.OutOfRange == "" {
		if len(v) > maxOutOfRangeDigits {
			v = v[:maxOutOfRangeDigits] + "..."
		}
		info.OutOfRange = field + " " + v
	}
	return false
}

// maxOutOfRangeDigits bounds the digits of an out-of-range window quoted
// in a message.
const maxOutOfRangeDigits = 24

// jsonNumber is raw as written when it is a JSON number.
func jsonNumber(raw json.RawMessage) (string, bool) {
	var n json.Number
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) || json.Unmarshal(raw, &n) != nil {
		return "", false
	}
	return n.String(), true
}

func jsonString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

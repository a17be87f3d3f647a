package client

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
)

// This file reads the counts an over-window refusal carries: the
// request's failure names them, exact sizing learns from a refused
// calibration request and a run's plan check counts a refused prompt
// (capacity/PROTOCOL.md#exact-token-sizing).

// llamaCppWindowErrorType is the error type of llama.cpp's refusal of a
// prompt longer than a slot's context (HTTP 400 before any stream):
//
//	{"error":{"code":400,"message":"request (44722 tokens) exceeds the available context size (8192 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":44722,"n_ctx":8192}}
const llamaCppWindowErrorType = "exceed_context_size_error"

// A WindowRefusal is what an over-window refusal says: the server's count
// of the refused prompt and the window it refused it for.
type WindowRefusal struct {
	PromptTokens int // n_prompt_tokens
	Window       int // n_ctx
}

// parseWindowRefusal reads an over-window refusal from the text of an
// error answer (the body itself, or a failure message quoting it after a
// prefix such as "HTTP 400 Bad Request: "): the first JSON object in text
// whose "error" has type exceed_context_size_error and positive integer
// n_prompt_tokens and n_ctx. ok is false for anything else, a cut body
// included.
func parseWindowRefusal(text string) (WindowRefusal, bool) {
	i := strings.IndexByte(text, '{')
	if i < 0 {
		return WindowRefusal{}, false
	}
	var body struct {
		Error struct {
			Type          string          `json:"type"`
			NPromptTokens json.RawMessage `json:"n_prompt_tokens"`
			NCtx          json.RawMessage `json:"n_ctx"`
		} `json:"error"`
	}
	if json.NewDecoder(strings.NewReader(text[i:])).Decode(&body) != nil || body.Error.Type != llamaCppWindowErrorType {
		return WindowRefusal{}, false
	}
	n, ok1 := PositiveInt(body.Error.NPromptTokens)
	w, ok2 := PositiveInt(body.Error.NCtx)
	if !ok1 || !ok2 {
		return WindowRefusal{}, false
	}
	return WindowRefusal{PromptTokens: n, Window: w}, true
}

// Refusal returns the over-window refusal of a request that failed with
// an HTTP 4xx status whose answer carried the counts.
func (ex *Exchange) Refusal() (WindowRefusal, bool) {
	if !ex.received || ex.status < 400 || ex.status >= 500 {
		return WindowRefusal{}, false
	}
	return parseWindowRefusal(ex.message)
}

// CountedPromptTokens is the server's count of the request's prompt:
// usage.prompt_tokens as checked (after Evaluate), else the
// n_prompt_tokens of an over-window refusal; nil when the server counted
// none.
func (ex *Exchange) CountedPromptTokens() *int {
	if n := wireIntPtr(ex.stream.usage.Prompt); n != nil {
		return n
	}
	if r, ok := ex.Refusal(); ok {
		return &r.PromptTokens
	}
	return nil
}

// PositiveInt reads a JSON number that is a positive integer (32768 or
// 32768.0) fitting an int32.
func PositiveInt(raw json.RawMessage) (int, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, false
	}
	var f float64
	if json.Unmarshal(raw, &f) != nil || f < 1 || f > math.MaxInt32 || f != math.Trunc(f) {
		return 0, false
	}
	return int(f), true
}

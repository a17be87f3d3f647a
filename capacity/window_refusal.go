package capacity

import (
	"encoding/json"
	"strings"
)

// This file reads the counts an over-window refusal carries, so that exact
// sizing learns from a refused calibration request and a run's plan check
// counts a refused prompt (capacity/PROTOCOL.md#exact-token-sizing).

// llamaCppWindowErrorType is the error type of llama.cpp's refusal of a
// prompt longer than a slot's context (HTTP 400 before any stream):
//
//	{"error":{"code":400,"message":"request (44722 tokens) exceeds the available context size (8192 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":44722,"n_ctx":8192}}
const llamaCppWindowErrorType = "exceed_context_size_error"

// windowRefusal is what an over-window refusal says: the server's count of
// the refused prompt and the window it refused it for.
type windowRefusal struct {
	promptTokens int // n_prompt_tokens
	window       int // n_ctx
}

// parseWindowRefusal reads an over-window refusal from the text of an
// error answer (the body itself, or a failure message quoting it after a
// prefix such as "HTTP 400 Bad Request: "): the first JSON object in text
// whose "error" has type exceed_context_size_error and positive integer
// n_prompt_tokens and n_ctx. ok is false for anything else, a cut body
// included.
func parseWindowRefusal(text string) (windowRefusal, bool) {
	i := strings.IndexByte(text, '{')
	if i < 0 {
		return windowRefusal{}, false
	}
	var body struct {
		Error struct {
			Type          string          `json:"type"`
			NPromptTokens json.RawMessage `json:"n_prompt_tokens"`
			NCtx          json.RawMessage `json:"n_ctx"`
		} `json:"error"`
	}
	if json.NewDecoder(strings.NewReader(text[i:])).Decode(&body) != nil || body.Error.Type != llamaCppWindowErrorType {
		return windowRefusal{}, false
	}
	n, ok1 := positiveInt(body.Error.NPromptTokens)
	w, ok2 := positiveInt(body.Error.NCtx)
	if !ok1 || !ok2 {
		return windowRefusal{}, false
	}
	return windowRefusal{promptTokens: n, window: w}, true
}

// refusalOf returns the over-window refusal of a request that failed with
// an HTTP 4xx status whose answer carried the counts.
func refusalOf(ex *exchange) (windowRefusal, bool) {
	if !ex.received || ex.status < 400 || ex.status >= 500 {
		return windowRefusal{}, false
	}
	return parseWindowRefusal(ex.message)
}

// countedPromptTokens is the server's count of the request's prompt:
// usage.prompt_tokens as checked, else the n_prompt_tokens of an
// over-window refusal; nil when the server counted none.
func countedPromptTokens(ex *exchange) *int {
	if n := wireIntPtr(ex.stream.usage.prompt); n != nil {
		return n
	}
	if r, ok := refusalOf(ex); ok {
		return &r.promptTokens
	}
	return nil
}

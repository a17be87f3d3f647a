package fakeserver

import (
	"bytes"
	"encoding/json"
	"hash/fnv"
	"io"
	"net/http"
	"strconv"
)

// An errorAPI is an API's name and how it writes an error answer.
type errorAPI interface {
	// name is the API's name: "chat", "responses", "messages",
	// "completions", "embeddings".
	name() string
	// errorBody renders an error answer as the API writes it.
	errorBody(d *Dialect, e *apiError) []byte
}

// An api is one of the generating APIs the fake serves over its one
// engine: what its request body says and how its answers are written.
// Every API shares the engine's timing (prefill, decode, reasoning), the
// prefix cache, the output plan and the faults.
type api interface {
	errorAPI
	// path is the route it answers, under /v1.
	path() string
	// parse reads a request body, or says what is wrong with it.
	parse(body []byte) (request, *apiError)
	// contentType is the Content-Type of a stream.
	contentType(d *Dialect) string
	// framer returns the writer of one streamed answer's events.
	framer(sw *streamWriter) framer
	// body renders a non-streamed answer.
	body(sw *streamWriter, a *answer) []byte
}

// apis are the generating APIs, in the order the package documents them.
var apis = []api{chatAPI{}, responsesAPI{}, messagesAPI{}, completionsAPI{}}

// request is a request of any API, as the fake reads it.
type request struct {
	Model    string
	Messages []message
	// PromptField names the messages in an error: "messages", "input",
	// "prompt".
	PromptField  string
	Stream       bool
	IncludeUsage bool // the answer reports usage (a stream only when asked, for chat and completions)
	Temperature  *float64
	TopP         *float64
	MaxTokens    *int
	// MaxField names MaxTokens in an error: "max_tokens",
	// "max_completion_tokens", "max_output_tokens".
	MaxField  string
	IgnoreEOS bool
	// NoThinking: the request turned reasoning off.
	NoThinking bool
	// Raw: the prompt is not templated (completions): no
	// Config.TemplateTokens, and no reasoning.
	Raw bool
	// Instructions and Effort are Responses' instructions and
	// reasoning.effort, which its response objects repeat.
	Instructions *string
	Effort       string
	// Estimate is Ollama's estimate of a Messages request's input tokens,
	// which its message_start reports.
	Estimate int
}

// thinking reports whether the request leaves reasoning on.
func (q *request) thinking() bool { return !q.NoThinking && !q.Raw }

// apiError is an error answer: its status, and the members of an
// OpenAI-style error (an Anthropic-style one maps them).
type apiError struct {
	status                    int
	message, typ, param, code string
}

// decodeBody decodes a request body into v, the whole body one JSON
// value; the error is the 400 of an unreadable body.
func decodeBody(body []byte, v any) *apiError {
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(v); err != nil {
		return &apiError{status: http.StatusBadRequest, message: "invalid request body: " + err.Error(), typ: "invalid_request_error"}
	}
	return nil
}

// invalid is a 400 invalid_request_error naming param.
func invalid(param, message string) *apiError {
	return &apiError{status: http.StatusBadRequest, message: message, typ: "invalid_request_error", param: param}
}

// openAIError renders e as OpenAI writes errors, with a trailing newline:
// {"error":{"message","type","param","code"}}, param and code null when
// empty.
func openAIError(e *apiError) []byte {
	b := new(bytes.Buffer)
	b.WriteString(`{"error":{"message":`)
	m, _ := json.Marshal(e.message)
	b.Write(m)
	b.WriteString(`,"type":`)
	m, _ = json.Marshal(e.typ)
	b.Write(m)
	for _, v := range []struct{ k, v string }{{"param", e.param}, {"code", e.code}} {
		b.WriteString(`,"` + v.k + `":`)
		if v.v == "" {
			b.WriteString("null")
		} else {
			m, _ = json.Marshal(v.v)
			b.Write(m)
		}
	}
	b.WriteString("}}\n")
	return b.Bytes()
}

// writeError writes an OpenAI-style error body.
func writeError(w http.ResponseWriter, status int, msg, typ, param, code string) {
	writeErrorBody(w, status, openAIError(&apiError{status: status, message: msg, typ: typ, param: param, code: code}))
}

// writeErrorBody answers status with a JSON error body.
func writeErrorBody(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeAPIError answers e as a's errors are written.
func (s *Server) writeAPIError(w http.ResponseWriter, a errorAPI, e *apiError) {
	writeErrorBody(w, e.status, a.errorBody(&s.cfg.Dialect, e))
}

// htmlErrorBody is the page Dialect.HTMLErrors answers a bad request with,
// status 500, Content-Type text/html.
const htmlErrorBody = "<html>\n<head><title>500 Internal Server Error</title></head>\n<body>\n<center><h1>500 Internal Server Error</h1></center>\n<hr><center>fakeserver</center>\n</body>\n</html>\n"

// badRequest answers a request the server refuses: a's JSON error with
// e's status, or with Dialect.HTMLErrors a 500 htmlErrorBody. It returns
// the status written.
func (s *Server) badRequest(w http.ResponseWriter, a errorAPI, e *apiError) int {
	if !s.cfg.Dialect.HTMLErrors {
		s.writeAPIError(w, a, e)
		return e.status
	}
	w.Header().Set("Content-Type", "text/html")
	w.Header().Set("Content-Length", strconv.Itoa(len(htmlErrorBody)))
	w.WriteHeader(http.StatusInternalServerError)
	_, _ = io.WriteString(w, htmlErrorBody)
	return http.StatusInternalServerError
}

// hashString is the FNV-1a hash of s, for ids drawn from a text.
func hashString(s string) uint64 {
	h := fnv.New64a()
	_, _ = io.WriteString(h, s)
	return h.Sum64()
}

// textOf returns the text of a JSON string or of an array of text parts
// ({"type":"text","text":...}, also input_text): a system prompt, a
// message's content.
func textOf(raw json.RawMessage) (string, error) {
	return message{Content: raw}.text()
}

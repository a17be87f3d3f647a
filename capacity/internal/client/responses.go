package client

import (
	"encoding/json"
	"net/http"

	"github.com/anvilbench/anvil/capacity/internal/jsonpick"
	"github.com/anvilbench/anvil/capacity/internal/responses"
)

// Responses is the dialect of OpenAI's Responses API, streamed
// (capacity/PROTOCOL.md#api-responses): POST {BaseURL}/responses with the
// prompt as the input string, "max_output_tokens" and "stream": true; an
// answer of response.* events ended by response.completed or
// response.incomplete, each decoded by package responses.
var Responses Dialect = responsesDialect{}

type responsesDialect struct{}

// Path implements Dialect.
func (responsesDialect) Path() string { return "/responses" }

// Header implements Dialect: an event stream, a bearer token.
func (responsesDialect) Header(h http.Header, key string) { bearerStream(h, key) }

// Streams implements Dialect.
func (responsesDialect) Streams() bool { return true }

// Encode implements Dialect: {"input":PROMPT, then the other fields sorted
// by name: max_output_tokens, model, reasoning ({"effort": ...} for
// Request.ReasoningEffort, {"effort":"none"} for thinking switched off,
// {"effort":"medium"}, the API's default, for thinking switched on),
// stream, temperature, top_p when set, and the extra fields. An explicit
// conversation is the input as message items
// ([{"content":...,"role":...}]).
func (responsesDialect) Encode(r *Request) (head, tail []byte, err error) {
	f := sampledFields(r, 8)
	f["max_output_tokens"] = r.MaxTokens
	f["stream"] = true
	switch {
	case r.ReasoningEffort != "":
		f["reasoning"] = map[string]string{"effort": r.ReasoningEffort}
	case r.Thinking != nil && !*r.Thinking:
		f["reasoning"] = map[string]string{"effort": "none"}
	case r.Thinking != nil:
		f["reasoning"] = map[string]string{"effort": "medium"} // the API's default effort, asked for
	}
	var list any
	if r.Messages != nil {
		list = chatMessages(r.Messages)
	}
	return promptFirst("input", "", "", f, list)
}

// NewDecoder implements Dialect.
func (responsesDialect) NewDecoder() Decoder { return &responsesDecoder{d: responses.NewDecoder()} }

// responsesDecoder decodes the events of one Responses stream.
type responsesDecoder struct {
	d *responses.Decoder
}

// Reset implements Decoder: each event is decoded on its own.
func (*responsesDecoder) Reset() {}

// Decode implements Decoder: a text delta is visible content, a reasoning
// delta reasoning; response.completed ends the answer with its usage,
// response.incomplete also with its incomplete_details.reason as the
// finish reason; response.failed and the error events are the server's
// error; every other event is activity. An event without data (a named
// ping) carries nothing.
func (d *responsesDecoder) Decode(name, data []byte, ev *Event) error {
	e, err := namedDecode(d.d, name, data, ev)
	if e == nil {
		return err
	}
	switch e.Kind {
	case responses.Text, responses.Reasoning:
		ev.addDelta(e.Delta, e.Kind == responses.Reasoning)
	case responses.Incomplete:
		if e.IncompleteReason.NonEmpty() {
			ev.Finish = append(ev.Finish, e.IncompleteReason.Bytes)
		}
		fallthrough
	case responses.Completed:
		ev.Done = true
		ev.Usage = responsesUsage(&e.Usage, data)
		ev.Timings = e.Timings
	case responses.Failed:
		ev.Error, ev.ErrorKind = []byte(e.ErrorMessage()), "response.failed"
	case responses.Error:
		ev.Error, ev.ErrorKind = []byte(e.ErrorMessage()), "error event"
		if string(name) != sseErrorEvent && e.Type.Kind != jsonpick.String {
			ev.ErrorKind = "error object"
		}
	}
	return nil
}

// responsesUsage is the client's Usage of a final event's response.usage:
// input_tokens, output_tokens, total_tokens and
// input_tokens_details.cached_tokens.
func responsesUsage(u *responses.Usage, data []byte) Usage {
	if !u.Present {
		return Usage{}
	}
	if plainCount(u.Input) && plainCount(u.Output) && plainCount(u.Total) && plainCount(u.Cached) {
		return Usage{Present: true, Prompt: fastCount(u.Input), Completion: fastCount(u.Output), Total: fastCount(u.Total), Cached: fastCount(u.Cached)}
	}
	var slow struct {
		Response struct {
			Usage struct {
				Input              Count `json:"input_tokens"`
				Output             Count `json:"output_tokens"`
				Total              Count `json:"total_tokens"`
				InputTokensDetails *struct {
					Cached Count `json:"cached_tokens"`
				} `json:"input_tokens_details"`
			} `json:"usage"`
		} `json:"response"`
	}
	if json.Unmarshal(data, &slow) != nil {
		return Usage{Present: true} // unreachable: the decoder accepted the data
	}
	s := slow.Response.Usage
	out := Usage{Present: true, Prompt: s.Input, Completion: s.Output, Total: s.Total}
	if s.InputTokensDetails != nil {
		out.Cached = s.InputTokensDetails.Cached
	}
	return out
}

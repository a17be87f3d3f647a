package client

import (
	"encoding/json"
	"net/http"
	"time"
)

// A Dialect is what a request speaks: the API's route and headers, the
// request body it writes from a Request, and the decoding of each event
// of its answer into the client's Event. ChatCompletions is one; the
// client's every other step (the clock, the limits, the framing, the
// failure classes, the usage check, the contracts) is the same whatever
// the dialect. A Dialect holds no state of a request and is safe for
// concurrent use; the state of one answer is its Decoder's.
type Dialect interface {
	// Path is the API's route below the base URL: "/chat/completions".
	Path() string
	// Header sets on h what every request of the API carries besides
	// Config.Header: the media type of the answer it asks for (Accept)
	// and key, the credential, in the API's own header ("Authorization:
	// Bearer", "x-api-key"; none for an empty key), with any version
	// header the API requires.
	Header(h http.Header, key string)
	// Streams reports whether the answer is a text/event-stream of
	// events. When it is not, the answer is one JSON body
	// (application/json), decoded as a single event without a name
	// that arrived when the body ended.
	Streams() bool
	// Encode writes the body of r as head + the JSON string of r's prompt
	// + tail when r.Messages is nil: the caller writes the prompt (the
	// one user message, or the API's one input) between them, so that a
	// run encodes its fixed fields once and streams each prompt. With
	// r.Messages set the whole body is head + tail. The error is that of
	// a value that does not encode (an extra field).
	Encode(r *Request) (head, tail []byte, err error)
	// NewDecoder returns a decoder of answers. The client keeps the
	// decoders it made and uses each for one answer after another, so
	// that decoding allocates nothing once their buffers have grown.
	NewDecoder() Decoder
}

// A Decoder decodes the events of an answer, one after the other. It is
// used by one request at a time.
type Decoder interface {
	// Reset readies the decoder for a new answer: nothing of the last one
	// (a count it merges, a part it is inside) carries over; its buffers
	// may.
	Reset()
	// Decode decodes one event: name is its SSE event type ("" when it
	// had no event line, and for an answer that does not stream), data
	// its data. It writes what the event carried into ev, which the
	// client has emptied and stamped (ev.At); the slices it leaves in ev
	// may be views of data or of the decoder's own buffers, valid until
	// the next call. An error means data is not an event of the API
	// (malformed JSON, not one object): the request fails with it.
	Decode(name, data []byte, ev *Event) error
}

// A Request is what a request asks for, in no API's words: each Dialect
// writes it in its own (the same planned prompt is the same text in
// every API).
type Request struct {
	// Model is the model id sent.
	Model string
	// MaxTokens bounds the tokens generated (chat's max_tokens, Responses'
	// max_output_tokens).
	MaxTokens int
	// Messages is an explicit conversation; nil for one user message, the
	// prompt, which the caller writes between the body's head and tail.
	Messages []Message
	// Temperature is sent when not nil; nil sends DefaultTemperature.
	// TopP is sent when not nil.
	Temperature, TopP *float64
	// Thinking, when not nil, switches the model's thinking on or off
	// (chat's chat_template_kwargs.enable_thinking); ReasoningEffort, when
	// not empty, asks for that effort. A workload sets at most one.
	Thinking        *bool
	ReasoningEffort string
	// Extra holds fields merged into the body (Target.ExtraBody, a
	// Source's Request.Body); their keys never collide with the fields the
	// dialect writes (validation refuses them).
	Extra map[string]any
	// EncodingFormat is an embeddings request's encoding_format: "float"
	// (also empty) or "base64".
	EncodingFormat string
}

// A Message is one message of an explicit conversation.
type Message struct {
	Role    string // "system", "user" or "assistant"
	Content string
}

// DefaultTemperature is the temperature sent when Request.Temperature is
// nil: 0.0, as the reference tool's capacity client sends on every
// request, so that both tools' requests (and greedy outputs) are the same.
const DefaultTemperature = 0.0

// defaultTemperatureJSON is DefaultTemperature written as the reference
// writes it (Python's 0.0, where Go's encoder would write 0).
const defaultTemperatureJSON = json.Number("0.0")

// An Event is one event of an answer in the client's model, whatever the
// API's wire form: what it carried, all of it arrived at At. The client
// folds it into the answer's result: the first output and the first
// visible content, the chunk gaps, the bounded capture, the finish
// reasons, the last usage, the terminal event. An event that carries none
// of these (a ping, a part's start) is activity only: counted, kept out of
// the timing.
type Event struct {
	// At is the event's arrival: the monotonic stamp of the read that
	// completed it, taken before it was decoded.
	At time.Time
	// Content holds the visible text deltas of the event, one per piece
	// (a chat chunk's choices), each non-empty.
	Content [][]byte
	// Reasoning: the event carried reasoning (thinking) text.
	Reasoning bool
	// Finish holds the finish (stop) reasons the event carried, each
	// non-empty: "stop", "length"; a failing one ("abort", "error") makes
	// the answer a failure.
	Finish [][]byte
	// Usage is the answer's counts as of this event, when Usage.Present
	// (a decoder sets it whole: Present and every count): it replaces
	// what earlier events reported, so an API that reports them over
	// several events (Messages) is decoded into the counts so far.
	Usage Usage
	// Timings is the raw JSON of the server's own timings object
	// (llama.cpp's "timings"), nil when none.
	Timings []byte
	// Error, when not nil, is the server's word that the request failed
	// (its message, or the error's JSON), ErrorKind what carried it
	// ("error event", "error object"): the answer fails as server_error.
	Error     []byte
	ErrorKind string
	// Done: the terminal event, the answer is complete ([DONE],
	// message_stop, response.completed). It may carry the answer's last
	// parts (Responses' usage is in response.completed).
	Done bool
	// Vectors and Dimension are an embeddings answer's: its number of
	// vectors and the length of every one (the decoder checked that they
	// have one length and finite values); the client checks the count
	// against the request's inputs and the length against the run's.
	Vectors, Dimension int
	// Invalid, when not empty, is why the answer is not what was asked
	// (an embeddings answer's vectors), InvalidType its error_type: the
	// answer fails as embeddings_invalid.
	Invalid, InvalidType string
}

// reset empties ev for the next event, keeping its slices' storage. It
// writes the fields one by one (a whole Event copied on every event costs
// a bulk write barrier while the GC runs); the counts of Usage are left:
// a decoder sets Usage whole when the event reports usage.
func (ev *Event) reset(at time.Time) {
	ev.At = at
	ev.Content, ev.Finish = ev.Content[:0], ev.Finish[:0]
	ev.Reasoning, ev.Done, ev.Usage.Present = false, false, false
	if ev.Timings != nil || ev.Error != nil {
		ev.Timings, ev.Error, ev.ErrorKind = nil, nil, ""
	}
	if ev.Vectors != 0 || ev.Invalid != "" {
		ev.Vectors, ev.Dimension, ev.Invalid, ev.InvalidType = 0, 0, "", ""
	}
}

// carriesNothing reports whether the event carried nothing but, perhaps,
// its end: no content, reasoning, finish reason, usage, timings or error.
func (ev *Event) carriesNothing() bool {
	return len(ev.Content) == 0 && !ev.Reasoning && len(ev.Finish) == 0 && !ev.Usage.Present && ev.Timings == nil && ev.Error == nil &&
		ev.Vectors == 0 && ev.Invalid == ""
}

// Usage is what an answer reported of its token counts.
type Usage struct {
	// Present: the answer reported usage (an object, not absent or null).
	Present bool
	// Prompt, Completion, Total and Cached are the prompt tokens, the
	// completion (output) tokens, their total and the prompt tokens read
	// from the cache, each as the usage check sees a count.
	Prompt, Completion, Total, Cached Count
}

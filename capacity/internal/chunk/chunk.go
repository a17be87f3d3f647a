package chunk

import "github.com/anvilbench/anvil/capacity/internal/jsonpick"

// Errors of a payload that is not one JSON object (package jsonpick's).
var (
	// ErrNotObject: the payload, white space trimmed, is empty or does not
	// begin with '{'.
	ErrNotObject = jsonpick.ErrNotObject
	// ErrTrailingData: a valid JSON object is followed by more than white
	// space.
	ErrTrailingData = jsonpick.ErrTrailingData
)

// A MalformedError is a payload beginning with '{' that encoding/json does
// not decode: Err is the *json.SyntaxError, *json.UnmarshalTypeError or
// io.ErrUnexpectedEOF that a json.Decoder returns for it.
type MalformedError = jsonpick.MalformedError

// The value types are package jsonpick's, shared with the decoders of the
// other streaming APIs; they are named here too so that a chunk reads on
// its own.
type (
	// Kind is the JSON type of a member's value, or Absent.
	Kind = jsonpick.Kind
	// Text is a member where the protocol expects a JSON string.
	Text = jsonpick.Text
	// Int is a usage count.
	Int = jsonpick.Int
	// IntKind says what a usage count holds.
	IntKind = jsonpick.IntKind
)

// The kinds of a member's value and of a usage count (see package jsonpick).
const (
	Absent = jsonpick.Absent
	Null   = jsonpick.Null
	Bool   = jsonpick.Bool
	Number = jsonpick.Number
	String = jsonpick.String
	Array  = jsonpick.Array
	Object = jsonpick.Object

	IntAbsent     = jsonpick.IntAbsent
	IntNull       = jsonpick.IntNull
	IntInteger    = jsonpick.IntInteger
	IntNotInteger = jsonpick.IntNotInteger
	IntOutOfRange = jsonpick.IntOutOfRange
	IntNotNumber  = jsonpick.IntNotNumber
)

// Choice is what is kept of one element of "choices".
type Choice struct {
	Content Text // delta.content
	Role    Text // delta.role
	// ReasoningContent and Reasoning report whether delta.reasoning_content
	// (vLLM, SGLang, llama.cpp) and delta.reasoning (ollama, recent vLLM)
	// are non-empty strings.
	ReasoningContent, Reasoning bool
	FinishReason                Text // finish_reason
}

// HasReasoning reports whether either reasoning member is a non-empty
// string.
func (c *Choice) HasReasoning() bool { return c.ReasoningContent || c.Reasoning }

// Usage is the "usage" member.
type Usage struct {
	// Present: usage is an object (not absent, not null). The counts are
	// Absent when it is not.
	Present bool
	// PromptTokens, CompletionTokens and TotalTokens are usage's members
	// of those names (prompt_tokens and so on).
	PromptTokens, CompletionTokens, TotalTokens Int
	// CachedTokens is usage.prompt_tokens_details.cached_tokens; it is
	// Absent when prompt_tokens_details is absent or null.
	CachedTokens Int
}

// Chunk is what is kept of one chat.completion.chunk.
type Chunk struct {
	// Choices holds every element of "choices" in array order; it is empty
	// when choices is absent, null or [].
	Choices []Choice
	Usage   Usage
	// Error is the raw JSON of a non-null "error" member (an in-stream
	// error: any value but null counts, as it always has); nil when the
	// member is absent or null.
	Error []byte
	// Object is the top-level "object" member: "chat.completion.chunk"
	// normally; vLLM and SGLang answer a failed request with an event
	// whose object is "error" and whose text is Message.
	Object Text
	// Message is the top-level "message" member (the text of such an
	// error object).
	Message Text
	// Timings is the raw JSON of a non-null top-level "timings" member
	// (llama.cpp's server-side timings: prompt_n, prompt_ms, predicted_n,
	// predicted_ms, cache_n, ...); nil when absent or null.
	Timings []byte
}

// IsErrorObject reports whether the chunk is an error object rather than
// a chunk: its "object" is "error" (vLLM's and SGLang's
// {"object":"error","message":...,"type":...,"code":...}).
func (c *Chunk) IsErrorObject() bool {
	return c.Object.Kind == String && string(c.Object.Bytes) == "error"
}

// HasError reports whether the chunk carries a non-null "error" member.
func (c *Chunk) HasError() bool { return c.Error != nil }

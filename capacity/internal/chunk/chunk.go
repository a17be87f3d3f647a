package chunk

import (
	"errors"
	"fmt"
	"strconv"
)

// Errors of a payload that is not one JSON object. Their texts are those the
// stream client has always reported.
var (
	// ErrNotObject: the payload, white space trimmed, is empty or does not
	// begin with '{'.
	ErrNotObject = errors.New("payload is not a JSON object")
	// ErrTrailingData: a valid JSON object is followed by more than white
	// space.
	ErrTrailingData = errors.New("data after the JSON object")
)

// A MalformedError is a payload beginning with '{' that encoding/json does
// not decode: Err is the *json.SyntaxError, *json.UnmarshalTypeError or
// io.ErrUnexpectedEOF that a json.Decoder returns for it.
type MalformedError struct {
	Err error
}

var _ error = (*MalformedError)(nil)

// Error returns the text of the encoding/json error.
func (e *MalformedError) Error() string { return e.Err.Error() }

// Unwrap returns the encoding/json error.
func (e *MalformedError) Unwrap() error { return e.Err }

// Kind is the JSON type of a member's value, or Absent.
type Kind uint8

// The kinds of a member's value.
const (
	Absent Kind = iota // the member is not in the object (or its object is absent or null)
	Null
	Bool
	Number
	String
	Array
	Object
)

var kindNames = [...]string{"absent", "null", "bool", "number", "string", "array", "object"}

var _ fmt.Stringer = Kind(0)

// String returns the kind's name: "absent", "null", "string" and so on.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// kindOf returns the kind of a valid JSON value beginning with c.
func kindOf(c byte) Kind {
	switch c {
	case 'n':
		return Null
	case 't', 'f':
		return Bool
	case '"':
		return String
	case '[':
		return Array
	case '{':
		return Object
	}
	return Number
}

// Text is a member where the protocol expects a JSON string.
type Text struct {
	// Kind is the JSON type of the value.
	Kind Kind
	// Bytes is the string, unescaped, when Kind is String; nil otherwise.
	// See the package documentation for how long it is valid.
	Bytes []byte
}

// NonEmpty reports whether the value is a non-empty string. A number, an
// object or any other non-string value is no text, as the client has always
// treated it.
func (t Text) NonEmpty() bool { return t.Kind == String && len(t.Bytes) > 0 }

// String returns the text, "" unless Kind is String. It allocates.
func (t Text) String() string { return string(t.Bytes) }

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

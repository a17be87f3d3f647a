package capacity

import (
	"bytes"
	"encoding/json"
)

// wireString decodes a JSON string and leaves every other JSON value (null,
// a number, an object) as the empty string, so that a server putting a
// structured value where text is expected produces no output rather than a
// malformed-chunk failure.
type wireString string

// UnmarshalJSON implements json.Unmarshaler.
func (s *wireString) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '"' {
		*s = ""
		return nil
	}
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = wireString(v)
	return nil
}

// wireInt decodes a JSON integer; null, absent and non-integer values leave
// it unset.
type wireInt struct {
	v  int64
	ok bool
}

// UnmarshalJSON implements json.Unmarshaler.
func (n *wireInt) UnmarshalJSON(b []byte) error {
	var v json.Number
	if len(b) == 0 || b[0] == 'n' || json.Unmarshal(b, &v) != nil {
		*n = wireInt{}
		return nil
	}
	i, err := v.Int64()
	*n = wireInt{v: i, ok: err == nil}
	return nil
}

// streamChunk holds the only fields of a chat.completion.chunk the client
// reads. One value is reused for every event of a stream.
type streamChunk struct {
	Choices []chunkChoice `json:"choices"`
	Usage   *chunkUsage   `json:"usage"`
	// Error is an in-stream error object ({"error": {...}}); null and
	// absent both leave it empty.
	Error json.RawMessage `json:"error"`
}

type chunkChoice struct {
	Delta struct {
		Content          wireString `json:"content"`
		ReasoningContent wireString `json:"reasoning_content"`
		Reasoning        wireString `json:"reasoning"`
	} `json:"delta"`
	FinishReason wireString `json:"finish_reason"`
}

type chunkUsage struct {
	PromptTokens        wireInt `json:"prompt_tokens"`
	CompletionTokens    wireInt `json:"completion_tokens"`
	TotalTokens         wireInt `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens wireInt `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// reset clears c for the next event, keeping the choices' storage.
func (c *streamChunk) reset() {
	clear(c.Choices)
	c.Choices = c.Choices[:0]
	c.Usage = nil
	c.Error = c.Error[:0]
}

// decode parses data into c. A payload that is not a JSON object is an
// error.
func (c *streamChunk) decode(data []byte) error {
	c.reset()
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return errNotObject
	}
	return json.Unmarshal(data, c)
}

// hasError reports whether the chunk carried a non-null error object.
func (c *streamChunk) hasError() bool {
	return len(c.Error) > 0 && !bytes.Equal(c.Error, []byte("null"))
}

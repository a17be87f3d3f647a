package capacity

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"strconv"
)

// wireString decodes a JSON string and leaves every other JSON value (null,
// a number, an object) as the empty string, so that a server putting a
// structured value where text is expected produces no output rather than a
// malformed-chunk failure.
type wireString string

// UnmarshalJSON implements json.Unmarshaler. b is a valid JSON value (the
// decoder checked it); a string without escapes is copied directly.
func (s *wireString) UnmarshalJSON(b []byte) error {
	if len(b) < 2 || b[0] != '"' {
		*s = ""
		return nil
	}
	if bytes.IndexByte(b, '\\') < 0 {
		*s = wireString(b[1 : len(b)-1])
		return nil
	}
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = wireString(v)
	return nil
}

// wireNonEmpty records only whether a JSON value is a non-empty string:
// all the client needs of reasoning text, decoded without a copy.
type wireNonEmpty bool

// UnmarshalJSON implements json.Unmarshaler.
func (n *wireNonEmpty) UnmarshalJSON(b []byte) error {
	*n = len(b) > 2 && b[0] == '"'
	return nil
}

// wireInt decodes a JSON count. null and absent leave it unset; an integer
// (also one written with a fraction of zero or an exponent, such as 24.0)
// that fits int64 sets it; any other value (a fraction, a string, a
// boolean, an object, a number beyond int64) is kept as its JSON text in
// bad, so that the usage check can name it (see checkUsage).
type wireInt struct {
	v   int64
	ok  bool
	bad string // the JSON text of a present value that is not an integer, bounded
}

// maxBadUsageText bounds the JSON text of a bad usage value kept for its
// failure message.
const maxBadUsageText = 64

// UnmarshalJSON implements json.Unmarshaler. b is one valid JSON value.
func (n *wireInt) UnmarshalJSON(b []byte) error {
	*n = wireInt{}
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	if b[0] == '-' || (b[0] >= '0' && b[0] <= '9') {
		if i, err := strconv.ParseInt(string(b), 10, 64); err == nil {
			*n = wireInt{v: i, ok: true}
			return nil
		}
		// Exactly representable integers up to 2^53 written as floats.
		if f, err := strconv.ParseFloat(string(b), 64); err == nil && f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
			*n = wireInt{v: int64(f), ok: true}
			return nil
		}
	}
	bad, cut := cutOnRune(string(b), maxBadUsageText)
	if cut {
		bad += "..."
	}
	n.bad = bad
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
		Content          wireString   `json:"content"`
		ReasoningContent wireNonEmpty `json:"reasoning_content"`
		Reasoning        wireNonEmpty `json:"reasoning"`
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

// chunkDecoder decodes the data of a stream's events one after the other.
// It keeps one json.Decoder for the whole stream, so the decoder's state
// is allocated once per stream rather than once per event.
type chunkDecoder struct {
	src eventSource
	dec *json.Decoder
	fed int64 // bytes handed to the decoder so far
}

func newChunkDecoder() *chunkDecoder {
	d := &chunkDecoder{}
	d.dec = json.NewDecoder(&d.src)
	return d
}

// eventSource hands the decoder one event's data, then io.EOF.
type eventSource struct{ data []byte }

var _ io.Reader = (*eventSource)(nil)

func (s *eventSource) Read(p []byte) (int, error) {
	if len(s.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.data)
	s.data = s.data[n:]
	return n, nil
}

// decode parses one event's data into c. The data must be exactly one JSON
// object; anything else is an error, after which the decoder is not used
// again (a malformed chunk ends the stream).
func (d *chunkDecoder) decode(data []byte, c *streamChunk) error {
	c.reset()
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return errNotObject
	}
	d.src.data = data
	d.fed += int64(len(data))
	if err := d.dec.Decode(c); err != nil {
		return err
	}
	if d.dec.InputOffset() != d.fed {
		return errTrailingData
	}
	return nil
}

// hasError reports whether the chunk carried a non-null error object.
func (c *streamChunk) hasError() bool {
	return len(c.Error) > 0 && !bytes.Equal(c.Error, []byte("null"))
}

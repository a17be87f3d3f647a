package capacity

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/anvilbench/anvil/capacity/internal/jsonstr"
)

// requestEncoder writes the chat-completions request body of capacity/PROTOCOL.md
// section 4. Everything but the prompt is the same for every request of a
// run, so it is encoded once: a request body is head + the JSON-quoted prompt
// + tail, with no reflection per request.
type requestEncoder struct {
	head []byte // {"messages":[{"content":
	tail []byte // ,"role":"user"}], then the remaining fields, sorted
}

// defaultTemperature is the temperature sent when Workload.Temperature is
// nil: 0.0, as the reference tool's capacity client sends on every request,
// so that both tools' requests (and greedy outputs) are the same.
const defaultTemperature = 0.0

// defaultTemperatureJSON is defaultTemperature written as the reference
// writes it (Python's 0.0, where Go's encoder would write 0).
const defaultTemperatureJSON = json.Number("0.0")

// bodyFields returns the request fields other than messages: model,
// max_tokens, stream, stream_options, temperature (defaultTemperature unless
// set), top_p when set, the
// thinking control (chat_template_kwargs or reasoning_effort, never both)
// and Target.ExtraBody (whose keys never collide with these: validation
// refuses the reserved ones).
func bodyFields(t Target, w Workload) map[string]any {
	f := make(map[string]any, 8+len(t.ExtraBody))
	for k, v := range t.ExtraBody {
		f[k] = v
	}
	f["model"] = t.Model
	f["max_tokens"] = w.MaxTokens
	f["stream"] = true
	f["stream_options"] = map[string]bool{"include_usage": true}
	if w.Temperature != nil {
		f["temperature"] = *w.Temperature
	} else {
		f["temperature"] = defaultTemperatureJSON
	}
	if w.TopP != nil {
		f["top_p"] = *w.TopP
	}
	switch {
	case w.ReasoningEffort != "":
		f["reasoning_effort"] = string(w.ReasoningEffort)
	case w.ThinkingMode == thinkingEnabled:
		f["chat_template_kwargs"] = map[string]bool{"enable_thinking": true}
	case w.ThinkingMode == thinkingDisabled:
		f["chat_template_kwargs"] = map[string]bool{"enable_thinking": false}
	}
	return f
}

// newRequestEncoder encodes the fixed part of every request body of a run.
func newRequestEncoder(t Target, w Workload) (*requestEncoder, error) {
	var rest bytes.Buffer
	enc := json.NewEncoder(&rest)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(bodyFields(t, w)); err != nil {
		return nil, fmt.Errorf("%w: Target.ExtraBody does not encode as JSON: %w", ErrInvalidConfig, err)
	}
	fields := bytes.TrimSpace(rest.Bytes()) // {"max_tokens":..., ...}
	tail := append([]byte(`,"role":"user"}],`), fields[1:]...)
	return &requestEncoder{head: []byte(`{"messages":[{"content":`), tail: tail}, nil
}

// appendBody appends the request body for prompt to dst.
func (e *requestEncoder) appendBody(dst, prompt []byte) []byte {
	dst = append(dst, e.head...)
	dst = jsonstr.Append(dst, prompt, jsonstr.Go)
	return append(dst, e.tail...)
}

// bodyBuffer is a worker's reusable request-body storage. The transport may
// still read a request body after RoundTrip returns (and may ask for it again
// through GetBody), so the bytes are reused only once every reader handed
// out has been closed; otherwise the worker allocates afresh.
type bodyBuffer struct {
	buf  []byte
	open *atomic.Int32 // readers handed out and not yet closed
}

// reset returns storage for the next body, empty.
func (b *bodyBuffer) reset() []byte {
	if b.open != nil && b.open.Load() != 0 {
		// A transport still holds a reader: leave that array to it.
		b.buf, b.open = nil, nil
	}
	if b.open == nil {
		b.open = new(atomic.Int32)
	}
	return b.buf[:0]
}

// reader returns a body reader over b.buf whose Close is counted.
func (b *bodyBuffer) reader() io.ReadCloser {
	b.open.Add(1)
	return &countedReader{Reader: bytes.NewReader(b.buf), open: b.open}
}

type countedReader struct {
	*bytes.Reader
	open   *atomic.Int32
	closed atomic.Bool
}

var _ io.ReadCloser = (*countedReader)(nil)

// Close implements io.Closer; only the first call counts.
func (r *countedReader) Close() error {
	if r.closed.CompareAndSwap(false, true) {
		r.open.Add(-1)
	}
	return nil
}

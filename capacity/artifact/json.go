package artifact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ErrNotArtifact is wrapped by the error UnmarshalJSON returns for a JSON
// document that is not a v1 capacity artifact (wrong or missing schema, or
// a missing key every generation of the artifact has).
var ErrNotArtifact = errors.New("not an " + Schema + " capacity artifact")

// artifactRequiredKeys are the keys every generation of the capacity artifact has,
// back to the oldest (legacy, 12 keys). A document lacking one is some
// other JSON that happens to be valid, even if it claims the schema.
var artifactRequiredKeys = []string{
	"base_url", "completed", "concurrency", "context_tokens", "max_context_tokens",
	"max_tokens", "metrics", "model", "requests", "run_id", "schema", "serve_flags",
}

var (
	_ json.Marshaler   = Report{}
	_ json.Unmarshaler = (*Report)(nil)
)

// MarshalJSON returns the artifact: keys sorted at every level, 2-space
// indent, no HTML escaping, integers exact, floats in the shortest form that
// reads back to the same float64, no trailing newline. A Report read from
// JSON writes back exactly the keys it was read with.
//
// encoding/json re-compacts (and HTML-escapes) what MarshalJSON returns when
// it embeds a Report; use Write or WriteFile to get the artifact bytes. It
// fails when the report holds NaN or ±Inf. (A value receiver, so Report and *Report both marshal
// as the artifact.)
func (r Report) MarshalJSON() ([]byte, error) {
	e := artEncoder{buf: make([]byte, 0, 16<<10)}
	reportTable.encode(&e, &r)
	if e.err != nil {
		return nil, e.err
	}
	return e.buf, nil
}

// writeTo writes the artifact to w as MarshalJSON does, followed by a
// newline, streaming in bounded memory (64 KiB at a time). After a
// non-finite number or a write error it writes nothing more and returns
// that error; w may then hold a partial document.
func (r *Report) writeTo(w io.Writer) (int64, error) {
	e := artEncoder{buf: make([]byte, 0, 8<<10), w: w}
	reportTable.encode(&e, r)
	e.buf = append(e.buf, '\n')
	if e.err == nil {
		e.flush()
	}
	return e.n, e.err
}

// UnmarshalJSON reads a v1 capacity artifact of any generation (legacy,
// capacity-v2, -v3, -v4-reasoning, current). It keeps exactly the keys the
// document had at every level, and unknown keys verbatim. It rejects, with
// an error naming the byte offset or the field and value: invalid or
// truncated JSON, bare NaN/Infinity, a top level that is not an object, a
// wrong or missing schema, a missing key every generation has (wrapping
// ErrNotArtifact), a value of the wrong type, negative counts, and a key
// repeated in one object at any depth; an error about a value begins with
// its path ("request_timings[3].ttft_ms: ..."). A leading UTF-8 byte order
// mark is ignored.
func (r *Report) UnmarshalJSON(data []byte) error {
	data = trimBOM(data)
	if !json.Valid(data) {
		var v any
		return jsonSyntaxError(data, json.Unmarshal(data, &v))
	}
	if k := jsonKind(data); k != "an object" {
		return fmt.Errorf("document: want a JSON object at top level, got %s", k)
	}
	if err := duplicateKey(data); err != nil {
		return err
	}
	ms := splitObject(data)
	top := make(map[string]json.RawMessage, len(ms))
	for _, m := range ms {
		top[m.key] = m.val
	}
	schemaRaw, ok := top["schema"]
	if !ok {
		return fmt.Errorf("schema: missing; %w", ErrNotArtifact)
	}
	schema, err := stringCodec.dec(schemaRaw)
	if err != nil {
		return atKey("schema", err)
	}
	if schema != Schema {
		return fmt.Errorf("schema: %q, want %q: %w", schema, Schema, ErrNotArtifact)
	}
	for _, k := range artifactRequiredKeys {
		if _, ok := top[k]; !ok {
			return fmt.Errorf("%s: missing (every capacity artifact has it); %w", k, ErrNotArtifact)
		}
	}
	var nr Report
	if err := reportTable.decodeMembers(&nr, ms); err != nil {
		return err
	}
	if err := nr.checkCounts(); err != nil {
		return err
	}
	*r = nr
	return nil
}

// checkCounts rejects negative counts.
func (r *Report) checkCounts() error {
	counts := []struct {
		key string
		v   int
	}{
		{"requests", r.Requests}, {"completed", r.Completed}, {"failed", r.Failed},
		{"concurrency", r.Concurrency}, {"responses_received", r.ResponsesReceived},
		{"max_tokens", r.MaxTokens},
	}
	for _, c := range counts {
		if c.v < 0 {
			return &pathError{Path: c.key, Err: fmt.Errorf("%d is negative; want a count >= 0", c.v)}
		}
	}
	return nil
}

// jsonSyntaxError turns a JSON decoding error into one naming the byte offset,
// and says so when the culprit is a bare NaN or Infinity.
func jsonSyntaxError(data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off := se.Offset
		if off >= int64(len(data)) && !json.Valid(data) {
			if skipSpace(data, 0) == len(data) {
				return fmt.Errorf("document: empty input")
			}
			return fmt.Errorf("document: truncated JSON at byte offset %d: %w", off, err)
		}
		at := max(off-1, 0)
		if at > 0 && data[at-1] == '-' && bytes.HasPrefix(data[at:], []byte("Infinity")) {
			at-- // the scanner accepted the minus sign
		}
		for _, lit := range []string{"NaN", "Infinity", "-Infinity"} {
			if bytes.HasPrefix(data[at:], []byte(lit)) {
				return fmt.Errorf("document: bare %s at byte offset %d: JSON has no non-finite numbers (Python's json module writes them)", lit, at)
			}
		}
		return fmt.Errorf("document: invalid JSON at byte offset %d: %w", at, err)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field == "" {
		return fmt.Errorf("document: want a JSON object at top level, got %s", jsonKind(data))
	}
	return fmt.Errorf("document: %w", err)
}

// Package legacychunk is the stream client's decoding of a
// chat.completion.chunk payload as it was before package chunk: one
// encoding/json decode into structs whose leaves are the types below. It
// is the oracle the allocation-free decoder is held to: the tests of
// package chunk (the decoder) and of package capacity (the client's use
// of it) decode every payload both ways and compare. Only tests import it.
//
// The leaf types are the client's, verbatim but for their names; the
// structs around them are each test's own, since they differ in what they
// read (and package capacity's usage type is its own).
package legacychunk

import (
	"bytes"
	"encoding/json"
	"errors"
)

// The errors of Decode for a payload that is not one JSON object; any
// other is encoding/json's. Their texts are the client's.
var (
	ErrNotObject    = errors.New("payload is not a JSON object")
	ErrTrailingData = errors.New("data after the JSON object")
)

// Decode decodes one event's data into v as the client did: the data,
// trimmed of white space, must be exactly one JSON object.
func Decode(data []byte, v any) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return ErrNotObject
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.InputOffset() != int64(len(data)) {
		return ErrTrailingData
	}
	return nil
}

// String is a text leaf: a JSON string's text, unescaped only when it
// holds a backslash; any other value (null, a number, an object) is "".
type String string

// UnmarshalJSON implements json.Unmarshaler.
func (s *String) UnmarshalJSON(b []byte) error {
	if len(b) < 2 || b[0] != '"' {
		*s = ""
		return nil
	}
	if bytes.IndexByte(b, '\\') < 0 {
		*s = String(b[1 : len(b)-1])
		return nil
	}
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = String(v)
	return nil
}

// NonEmpty is a reasoning leaf: true for a non-empty JSON string.
type NonEmpty bool

// UnmarshalJSON implements json.Unmarshaler.
func (n *NonEmpty) UnmarshalJSON(b []byte) error {
	*n = len(b) > 2 && b[0] == '"'
	return nil
}

// Int is a count leaf: OK is true, and V the value, for a JSON number (or
// a string holding one) that is an int64 literal; for null, any other
// value and any other number OK is false.
type Int struct {
	V  int64
	OK bool
}

// UnmarshalJSON implements json.Unmarshaler.
func (n *Int) UnmarshalJSON(b []byte) error {
	var v json.Number
	if len(b) == 0 || b[0] == 'n' || json.Unmarshal(b, &v) != nil {
		*n = Int{}
		return nil
	}
	i, err := v.Int64()
	*n = Int{V: i, OK: err == nil}
	return nil
}

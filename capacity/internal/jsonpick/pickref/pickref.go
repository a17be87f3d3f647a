// Package pickref is the reference the decoders built on package jsonpick
// are held to: one encoding/json decode of a payload into structs whose
// leaves are json.RawMessage, then each leaf read on its own with
// encoding/json and strconv, independently of jsonpick's scanner. Each
// decoder's differential fuzz test writes its own structs and compares
// what it decodes with what these functions read. Only tests import it.
package pickref

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/anvilbench/anvil/capacity/internal/jsonpick"
)

// Decode decodes one payload into v with a json.Decoder: the payload,
// trimmed of white space, must be exactly one JSON object. Its errors are
// jsonpick's: ErrNotObject, ErrTrailingData, or a *jsonpick.MalformedError
// holding encoding/json's.
func Decode(data []byte, v any) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return jsonpick.ErrNotObject
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return &jsonpick.MalformedError{Err: err}
	}
	if dec.InputOffset() != int64(len(data)) {
		return jsonpick.ErrTrailingData
	}
	return nil
}

// Kind classifies a raw value (valid JSON) by its first byte; an empty
// one is absent.
func Kind(raw json.RawMessage) jsonpick.Kind {
	if len(raw) == 0 {
		return jsonpick.Absent
	}
	switch raw[0] {
	case 'n':
		return jsonpick.Null
	case 't', 'f':
		return jsonpick.Bool
	case '"':
		return jsonpick.String
	case '[':
		return jsonpick.Array
	case '{':
		return jsonpick.Object
	}
	return jsonpick.Number
}

// Text reads a text leaf: a string's text (its bytes as they are when it
// has no backslash, else what encoding/json unescapes), or the kind of any
// other value.
func Text(raw json.RawMessage) jsonpick.Text {
	k := Kind(raw)
	if k != jsonpick.String {
		return jsonpick.Text{Kind: k}
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return jsonpick.Text{Kind: k, Bytes: raw[1 : len(raw)-1]}
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		panic("pickref: a string encoding/json decoded does not unmarshal: " + err.Error())
	}
	return jsonpick.Text{Kind: k, Bytes: []byte(s)}
}

// Int reads a count leaf with json.Number and strconv.
func Int(raw json.RawMessage) jsonpick.Int {
	switch Kind(raw) {
	case jsonpick.Absent:
		return jsonpick.Int{}
	case jsonpick.Null:
		return jsonpick.Int{Kind: jsonpick.IntNull}
	}
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		return jsonpick.Int{Kind: jsonpick.IntNotNumber}
	}
	quoted := raw[0] == '"'
	i, err := n.Int64()
	switch {
	case err == nil:
		return jsonpick.Int{Kind: jsonpick.IntInteger, Value: i, Quoted: quoted}
	case errors.Is(err, strconv.ErrRange) && !strings.ContainsAny(n.String(), ".eE"):
		// strconv reports the range before the syntax: 2e19 written with
		// 20 digits and a fraction is out of range to it, but it is not
		// an integer literal (IntNotInteger: "whatever its value").
		return jsonpick.Int{Kind: jsonpick.IntOutOfRange, Quoted: quoted}
	}
	return jsonpick.Int{Kind: jsonpick.IntNotInteger, Quoted: quoted}
}

// Raw reads a raw leaf: its kind, and its text unless it is null.
func Raw(raw json.RawMessage) (jsonpick.Kind, []byte) {
	k := Kind(raw)
	if k == jsonpick.Absent || k == jsonpick.Null {
		return k, nil
	}
	return k, raw
}

// SameError reports whether a decoder's error is the reference's: the same
// sentinel, or a *jsonpick.MalformedError holding the same encoding/json
// error as want (itself one, or encoding/json's error), type errors
// compared by value, member path and offset, since the Go type names
// differ.
func SameError(got, want error) bool {
	switch {
	case want == nil || got == nil:
		return got == want
	case errors.Is(want, jsonpick.ErrNotObject), errors.Is(want, jsonpick.ErrTrailingData):
		return got == want
	}
	var g *jsonpick.MalformedError
	if !errors.As(got, &g) {
		return false
	}
	var ws, gs *json.SyntaxError
	if errors.As(want, &ws) {
		return errors.As(g.Err, &gs) && gs.Error() == ws.Error() && gs.Offset == ws.Offset
	}
	var wt, gt *json.UnmarshalTypeError
	if errors.As(want, &wt) {
		return errors.As(g.Err, &gt) && gt.Value == wt.Value && gt.Field == wt.Field &&
			gt.Offset == wt.Offset && gt.Type.Kind() == wt.Type.Kind()
	}
	if errors.Is(want, io.ErrUnexpectedEOF) {
		return g.Err == io.ErrUnexpectedEOF
	}
	return false
}

// TextCmp compares texts by content: nil and empty bytes are one text.
var TextCmp = cmp.Comparer(func(a, b jsonpick.Text) bool { return a.Kind == b.Kind && string(a.Bytes) == string(b.Bytes) })

// Differential fails tb unless a decoder and its reference agree on one
// input: the same error (SameError), or no error and the same value (go-cmp
// with TextCmp and opts). input describes the input in the failure.
func Differential[V any](tb testing.TB, input string, got V, gotErr error, want V, wantErr error, opts ...cmp.Option) {
	tb.Helper()
	if !SameError(gotErr, wantErr) {
		tb.Fatalf("decoding %s: error %v, encoding/json's %v", input, gotErr, wantErr)
	}
	if gotErr != nil {
		return
	}
	if diff := cmp.Diff(want, got, append(opts, TextCmp)...); diff != "" {
		tb.Fatalf("decoding %s disagrees with encoding/json (-json +fast):\n%s", input, diff)
	}
}

// Package embeddings checks the answer of an embeddings request (POST
// /v1/embeddings, not streamed): that it holds one vector per input, all
// of one dimension, every value a finite number, in the encoding asked
// for or the other one (servers that ignore encoding_format answer
// floats). It reads the body with package jsonpick, whose rules of
// equivalence with encoding/json apply, and allocates nothing once a
// Checker's buffer has grown to the largest base64 vector.
//
// An answer that is not JSON, or not an object of the expected shape
// ("data" not an array of objects, "usage" not an object), is one of
// jsonpick's errors; one with a non-null top-level "error" member is a
// *ServerError; one whose vectors are not what was asked is an
// *InvalidError, a failure class of its own: a server that answers the
// wrong number of vectors, vectors of different lengths, or a NaN (which
// JSON cannot write: a JSON-writing server sends null instead, a
// Python one a bare NaN token that makes the body invalid JSON, a base64
// one the bits of a NaN) has not answered the request, however fast.
package embeddings

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unsafe"

	"github.com/anvilbench/anvil/capacity/internal/jsonpick"
)

// Format is the encoding of a vector: the request's encoding_format.
type Format uint8

// The encodings of a vector.
const (
	// Float: a JSON array of numbers ("float", the default).
	Float Format = iota
	// Base64: a string, the standard base64 of the little-endian float32
	// values ("base64").
	Base64
)

var formatNames = [...]string{"float", "base64"}

// String returns the encoding_format value of f.
func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return "Format(" + strconv.Itoa(int(f)) + ")"
}

// Want is what the request asked for.
type Want struct {
	// Inputs is the number of inputs the request sent: the number of
	// vectors the answer must hold; 0 accepts any number (the caller
	// checks the count against its request), and the indices are then
	// checked against the vectors.
	Inputs int
	// Format is the encoding_format asked for.
	Format Format
	// Dimension is the length every vector must have; 0 accepts any, as
	// long as every vector of the answer has the same.
	Dimension int
}

// Usage is the answer's "usage".
type Usage struct {
	// Present: usage is an object (not absent, not null).
	Present bool
	// Prompt and Total are prompt_tokens and total_tokens.
	Prompt, Total jsonpick.Int
}

// Result is a valid answer.
type Result struct {
	// Vectors is the number of vectors, Dimension the length of each.
	Vectors, Dimension int
	// Format is the encoding the vectors came in.
	Format Format
	Usage  Usage
}

// Reason is why an answer's vectors are not what was asked.
type Reason uint8

// The reasons of an InvalidError, in the order they are checked.
const (
	// Count: not one vector per input.
	Count Reason = iota + 1
	// Empty: a vector of no values (an empty array or string).
	Empty
	// NotNumber: a value of a float vector that is not a number (a
	// string, an object, ...), or a vector that is neither an array nor a
	// string.
	NotNumber
	// NotFinite: a value that is null, a NaN or an infinity (as JSON
	// null, a bare NaN or Infinity token, a number beyond float64, or the
	// float32 bits of one in base64).
	NotFinite
	// BadBase64: a base64 vector that does not decode, or whose bytes are
	// not a whole number of float32 values.
	BadBase64
	// Dimension: a vector whose length differs from the first's (or from
	// Want.Dimension).
	Dimension
	// Index: a vector whose "index" is not the place of an input (0 to
	// Want.Inputs-1), or is that of an earlier vector: the indices, when
	// the server sends them, say which input each vector embeds.
	Index
)

var reasonNames = [...]string{"", "count", "empty", "not a number", "not finite", "bad base64", "dimension", "index"}

// String returns the reason's name.
func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return "Reason(" + strconv.Itoa(int(r)) + ")"
}

// An InvalidError is an answer whose vectors are not what was asked.
type InvalidError struct {
	Reason Reason
	// Vector is the index in "data" of the vector at fault; -1 for Count.
	Vector int
	// Detail says what was found, for the failure message.
	Detail string
}

var _ error = (*InvalidError)(nil)

// Error describes the fault.
func (e *InvalidError) Error() string {
	if e.Vector < 0 {
		return "embeddings answer: " + e.Detail
	}
	return fmt.Sprintf("embeddings answer: vector %d: %s", e.Vector, e.Detail)
}

// A ServerError is an answer with a non-null "error" member.
type ServerError struct {
	// Raw is the error's JSON text.
	Raw []byte
}

// Error returns the server's message, or the error's JSON text.
func (e *ServerError) Error() string {
	if m, ok := jsonpick.Message(e.Raw); ok {
		return "embeddings answer: error: " + m
	}
	return "embeddings answer: error: " + string(e.Raw)
}

var schema = jsonpick.Compile(
	jsonpick.Objs("data", jsonpick.Raw("embedding"), jsonpick.Count("index")),
	jsonpick.Obj("usage", jsonpick.Count("prompt_tokens"), jsonpick.Count("total_tokens")),
	jsonpick.Raw("error"),
)

var (
	sData      = schema.Slot("data")
	sEmbedding = schema.Slot("data.embedding")
	sIndex     = schema.Slot("data.index")
	sUsage     = schema.Slot("usage")
	sPrompt    = schema.Slot("usage.prompt_tokens")
	sTotal     = schema.Slot("usage.total_tokens")
	sError     = schema.Slot("error")
)

// A Checker checks answers one after the other, keeping its buffers. The
// zero value is not ready: use NewChecker. A Checker is not safe for
// concurrent use.
type Checker struct {
	d     *jsonpick.Decoder
	text  []byte   // an escaped base64 string, unescaped
	vec   []byte   // a base64 vector, decoded
	seen  []uint64 // the indices seen, one bit each
	stack jsonpick.SkipStack
}

// NewChecker returns a Checker.
func NewChecker() *Checker { return &Checker{d: jsonpick.NewDecoder(schema)} }

// Check checks the body of an answer to a request that asked for w.
func (c *Checker) Check(body []byte, w Want) (Result, error) {
	if w.Inputs < 0 {
		return Result{}, fmt.Errorf("embeddings: Want.Inputs = %d: must be at least 0 (0: any)", w.Inputs)
	}
	if err := c.d.Decode(body); err != nil {
		return Result{}, bareNonFinite(body, err)
	}
	if raw := c.d.Value(sError).Bytes; raw != nil {
		return Result{}, &ServerError{Raw: bytes.Clone(raw)}
	}
	r := Result{Format: w.Format}
	if u := c.d.Value(sUsage); u.Kind == jsonpick.Object {
		r.Usage = Usage{Present: true, Prompt: c.d.Value(sPrompt).Int, Total: c.d.Value(sTotal).Int}
	}
	r.Vectors = c.d.Value(sData).Len
	if w.Inputs > 0 && r.Vectors != w.Inputs {
		return Result{}, &InvalidError{Reason: Count, Vector: -1,
			Detail: fmt.Sprintf("%d vectors for %d inputs", r.Vectors, w.Inputs)}
	}
	r.Dimension = w.Dimension
	c.seen = append(c.seen[:0], make([]uint64, (r.Vectors+63)/64)...)
	for i := range r.Vectors {
		v := c.d.Elem(sEmbedding, i)
		n, f, err := c.vector(v)
		if err != nil {
			err.Vector = i
			return Result{}, err
		}
		r.Format = f
		switch {
		case r.Dimension == 0:
			r.Dimension = n
		case n != r.Dimension:
			return Result{}, &InvalidError{Reason: Dimension, Vector: i,
				Detail: fmt.Sprintf("%d values, where %s has %d", n, dimensionSource(i, w), r.Dimension)}
		}
		if err := c.index(c.d.Elem(sIndex, i).Int, r.Vectors); err != nil {
			err.Vector = i
			return Result{}, err
		}
	}
	return r, nil
}

// dimensionSource names what a vector's length is compared with.
func dimensionSource(i int, w Want) string {
	if w.Dimension > 0 {
		return "the asked dimension"
	}
	return "vector 0"
}

// index checks a vector's index, when present, against the n inputs and
// the indices seen.
func (c *Checker) index(x jsonpick.Int, n int) *InvalidError {
	if x.Kind == jsonpick.IntAbsent {
		return nil
	}
	v, ok := x.Int64()
	switch {
	case !ok:
		return &InvalidError{Reason: Index, Detail: "index is " + x.Kind.String()}
	case v < 0 || v >= int64(n):
		return &InvalidError{Reason: Index, Detail: fmt.Sprintf("index %d, for %d inputs", v, n)}
	case c.seen[v/64]&(1<<(v%64)) != 0:
		return &InvalidError{Reason: Index, Detail: fmt.Sprintf("index %d twice", v)}
	}
	c.seen[v/64] |= 1 << (v % 64)
	return nil
}

// vector checks one vector and returns its length and encoding.
func (c *Checker) vector(v *jsonpick.Value) (int, Format, *InvalidError) {
	switch v.Kind {
	case jsonpick.Array:
		n, err := c.floats(v.Bytes)
		return n, Float, err
	case jsonpick.String:
		n, err := c.base64(v.Bytes)
		return n, Base64, err
	case jsonpick.Null, jsonpick.Absent:
		return 0, Float, &InvalidError{Reason: Empty, Detail: "no embedding"}
	}
	return 0, Float, &InvalidError{Reason: NotNumber, Detail: "embedding is a " + v.Kind.String() + ", not an array or a base64 string"}
}

// floats checks a valid JSON array of numbers and returns its length.
func (c *Checker) floats(b []byte) (int, *InvalidError) {
	n := 0
	i := jsonpick.SkipSpace(b, 1)
	if b[i] == ']' {
		return 0, &InvalidError{Reason: Empty, Detail: "an empty array"}
	}
	for {
		end := jsonpick.ValueEnd(b, i, &c.stack)
		switch k := jsonpick.KindOf(b[i]); k {
		case jsonpick.Number:
			if s := b[i:end]; !finite(s) {
				return 0, &InvalidError{Reason: NotFinite, Detail: fmt.Sprintf("value %d is %s, beyond float64", n, s)}
			}
		case jsonpick.Null:
			return 0, &InvalidError{Reason: NotFinite, Detail: fmt.Sprintf("value %d is null (a NaN or an infinity written as JSON)", n)}
		default:
			return 0, &InvalidError{Reason: NotNumber, Detail: fmt.Sprintf("value %d is a %v", n, k)}
		}
		n++
		i = jsonpick.SkipSpace(b, end)
		if b[i] == ']' {
			return n, nil
		}
		i = jsonpick.SkipSpace(b, i+1) // the comma
	}
}

// maxFiniteDigits is the most digits before the point of a number
// without an exponent that float64 holds: its largest value is below
// 1.8e308, 309 digits.
const maxFiniteDigits = 309

// finite reports whether the valid JSON number s is finite as a float64.
// Only one with an exponent or with more than 308 digits before its point
// can overflow, so only those are parsed.
func finite(s []byte) bool {
	digits := 0
	for _, c := range s {
		switch {
		case c == 'e' || c == 'E':
			return parsesFinite(s)
		case c == '.':
			return digits < maxFiniteDigits || parsesFinite(s)
		case jsonpick.IsDigit(c):
			digits++
		}
	}
	return digits < maxFiniteDigits || parsesFinite(s)
}

// parsesFinite reports whether strconv parses s to a finite float64.
func parsesFinite(s []byte) bool {
	f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(s), len(s)), 64)
	return err == nil && !math.IsInf(f, 0)
}

// base64 checks a valid JSON string holding base64 float32 values and
// returns their number.
func (c *Checker) base64(q []byte) (int, *InvalidError) {
	s := q[1 : len(q)-1]
	if len(s) == 0 {
		return 0, &InvalidError{Reason: Empty, Detail: "an empty base64 string"}
	}
	if bytes.IndexByte(s, '\\') >= 0 {
		c.text = jsonpick.AppendUnescaped(c.text[:0], s)
		s = c.text
	}
	need := base64.StdEncoding.DecodedLen(len(s))
	if cap(c.vec) < need {
		c.vec = make([]byte, need)
	}
	dst := c.vec[:need]
	n, err := base64.StdEncoding.Decode(dst, s)
	if err != nil {
		return 0, &InvalidError{Reason: BadBase64, Detail: "base64: " + err.Error()}
	}
	if n%4 != 0 {
		return 0, &InvalidError{Reason: BadBase64, Detail: fmt.Sprintf("%d bytes, not a whole number of float32 values", n)}
	}
	for j := 0; j < n; j += 4 {
		f := math.Float32frombits(binary.LittleEndian.Uint32(dst[j:]))
		if f != f || math.IsInf(float64(f), 0) {
			return 0, &InvalidError{Reason: NotFinite, Detail: fmt.Sprintf("value %d is %v", j/4, f)}
		}
	}
	return n / 4, nil
}

// bareNonFinite turns the syntax error of a body with a bare NaN or
// Infinity token (Python's json.dumps writes them) into a NotFinite
// fault; any other error is returned as it is.
func bareNonFinite(body []byte, err error) error {
	var se *json.SyntaxError
	body = bytes.TrimSpace(body) // as jsonpick decoded it
	if !errors.As(err, &se) || se.Offset < 1 || se.Offset > int64(len(body)) {
		return err
	}
	rest := body[se.Offset-1:]
	for _, tok := range []string{"NaN", "Infinity", "nan", "inf"} {
		if len(rest) >= len(tok) && string(rest[:len(tok)]) == tok {
			return &InvalidError{Reason: NotFinite, Vector: -1, Detail: "a bare " + tok + " in the body (not JSON): " + err.Error()}
		}
	}
	return err
}

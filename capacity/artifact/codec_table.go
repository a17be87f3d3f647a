package artifact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/anvilbench/anvil/capacity/internal/jsonstr"
)

// The artifact artEncoder writes what Python's json.dump(obj, indent=2,
// sort_keys=True, ensure_ascii=False) writes, so artifacts of both tools
// are byte-compatible: keys sorted at every level, 2-space indent, ": "
// between key and value, empty objects and arrays as {} and [], strings
// escaped only where JSON requires it (no HTML escaping, non-ASCII kept as
// UTF-8), integers as integers, and floats in the shortest form that reads
// back to the same float64 (Python's repr: "519.0", "0.0001", "1e-05",
// "1.5e+16").

// artEncoder appends indented JSON to buf and, when w is set, hands buf to
// w whenever it holds flushBytes, so a large artifact streams in constant
// memory.
type artEncoder struct {
	buf   []byte
	depth int
	err   error     // first non-finite float met, or w's error
	w     io.Writer // nil: accumulate everything in buf
	n     int64     // bytes handed to w
}

const flushBytes = 64 << 10

// flush hands buf to w.
func (e *artEncoder) flush() {
	if e.w == nil || len(e.buf) == 0 || e.err != nil {
		return
	}
	n, err := e.w.Write(e.buf)
	e.n += int64(n)
	if err != nil && e.err == nil {
		e.err = err
	}
	e.buf = e.buf[:0]
}

func (e *artEncoder) newline() {
	if e.w != nil && len(e.buf) >= flushBytes {
		e.flush()
	}
	e.buf = append(e.buf, '\n')
	for range e.depth {
		e.buf = append(e.buf, "  "...)
	}
}

func (e *artEncoder) null()       { e.buf = append(e.buf, "null"...) }
func (e *artEncoder) int(v int64) { e.buf = strconv.AppendInt(e.buf, v, 10) }
func (e *artEncoder) bool(v bool) { e.buf = strconv.AppendBool(e.buf, v) }

// float appends v; a non-finite v (which JSON cannot hold) is written as
// null and recorded as the artEncoder's error.
func (e *artEncoder) float(v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		if e.err == nil {
			e.err = fmt.Errorf("capacity: the report holds the non-finite number %v, which JSON cannot represent", v)
		}
		e.null()
		return
	}
	e.buf = appendPyFloat(e.buf, v)
}

// appendPyFloat appends finite v as Python's repr(float) does.
func appendPyFloat(b []byte, v float64) []byte {
	if v == 0 {
		if math.Signbit(v) {
			return append(b, "-0.0"...)
		}
		return append(b, "0.0"...)
	}
	// Decimal exponent of the shortest representation: d.ddd x 10^exp.
	exp := 0
	if a := math.Abs(v); a < 1e-4 || a >= 1e16 {
		s := strconv.AppendFloat(nil, v, 'e', -1, 64)
		i := bytes.IndexByte(s, 'e')
		exp, _ = strconv.Atoi(string(s[i+1:]))
		// Python switches to exponent form when the decimal point is
		// more than 16 places right of the first digit or 4 left.
		if exp < -4 || exp >= 16 {
			return append(b, s...)
		}
	}
	start := len(b)
	b = strconv.AppendFloat(b, v, 'f', -1, 64)
	if bytes.IndexByte(b[start:], '.') < 0 {
		b = append(b, ".0"...)
	}
	return b
}

// string appends s as a JSON string, escaped as Python writes it.
func (e *artEncoder) string(s string) { e.buf = jsonstr.Append(e.buf, s, jsonstr.Python) }

// raw appends a JSON value kept verbatim from a document, re-indented to
// the current depth; number literals and key order are preserved.
func (e *artEncoder) raw(v json.RawMessage) {
	var out bytes.Buffer
	prefix := make([]byte, 0, 2*e.depth)
	for range e.depth {
		prefix = append(prefix, "  "...)
	}
	if err := json.Indent(&out, v, string(prefix), "  "); err != nil {
		// A RawMessage in a Report came from a validated document; a
		// caller that put invalid JSON there gets it back as a string.
		e.string(string(v))
		return
	}
	e.buf = append(e.buf, out.Bytes()...)
}

// field describes one JSON key of an object type T: how to write it from T
// and how to read it into T.
type artField[T any] struct {
	key string
	// omitNil: in the current shape the key is written only when isNil is
	// false (keys that exist only when something was evaluated).
	omitNil bool
	isNil   func(*T) bool
	enc     func(*artEncoder, *T)
	dec     func(*T, json.RawMessage) error
}

// codec writes and reads one Go value type.
type artCodec[V any] struct {
	enc func(*artEncoder, V)
	// encPtr, when set, writes *v without copying it (object types).
	encPtr func(*artEncoder, *V)
	dec    func(json.RawMessage) (V, error)
}

// write writes *v with c, without a copy when c can.
func (c *artCodec[V]) write(e *artEncoder, v *V) {
	if c.encPtr != nil {
		c.encPtr(e, v)
		return
	}
	c.enc(e, *v)
}

// fieldOf is the field key stored at get(t), written and read with c.
func fieldOf[T, V any](key string, get func(*T) *V, c artCodec[V]) artField[T] {
	return artField[T]{
		key: key,
		enc: func(e *artEncoder, t *T) { c.write(e, get(t)) },
		dec: func(t *T, raw json.RawMessage) error {
			v, err := c.dec(raw)
			if err != nil {
				return err
			}
			*get(t) = v
			return nil
		},
	}
}

// optionalOf is a nullableCodec field whose key the current shape writes only
// when the value is non-nil.
func optionalOf[T, V any](key string, get func(*T) **V, c artCodec[V]) artField[T] {
	f := fieldOf(key, get, nullableCodec(c))
	f.omitNil = true
	f.isNil = func(t *T) bool { return *get(t) == nil }
	return f
}

// table is the field set of an object type, sorted by key.
type artTable[T any] struct {
	fields  []artField[T]
	index   map[string]int
	shapeOf func(*T) *shape
}

func newArtTable[T any](shapeOf func(*T) *shape, fields ...artField[T]) *artTable[T] {
	if len(fields) > maxTableFields {
		panic("capacity: an artifact object type with more than maxTableFields keys")
	}
	slices.SortFunc(fields, func(a, b artField[T]) int {
		if a.key < b.key {
			return -1
		}
		if a.key > b.key {
			return 1
		}
		panic("capacity: duplicate artifact key " + a.key)
	})
	t := &artTable[T]{fields: fields, index: make(map[string]int, len(fields)), shapeOf: shapeOf}
	for i, f := range fields {
		t.index[f.key] = i
	}
	return t
}

// encode writes v as an object: the current shape, or exactly the keys v
// was read with, merged in key order with any unknown keys.
func (t *artTable[T]) encode(e *artEncoder, v *T) {
	sh := t.shapeOf(v)
	var extra []string
	for k := range sh.extra {
		if _, known := t.index[k]; !known {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	e.buf = append(e.buf, '{')
	e.depth++
	n := 0
	member := func(key string) {
		if n > 0 {
			e.buf = append(e.buf, ',')
		}
		n++
		e.newline()
		e.string(key)
		e.buf = append(e.buf, ':', ' ')
	}
	x := 0
	for i := range t.fields {
		f := &t.fields[i]
		for x < len(extra) && extra[x] < f.key {
			member(extra[x])
			e.raw(sh.extra[extra[x]])
			x++
		}
		if sh.index == nil {
			if f.omitNil && f.isNil(v) {
				continue
			}
		} else if !sh.hasField(i) {
			continue
		}
		member(f.key)
		f.enc(e, v)
	}
	for ; x < len(extra); x++ {
		member(extra[x])
		e.raw(sh.extra[extra[x]])
	}
	e.depth--
	if n > 0 {
		e.newline()
	}
	e.buf = append(e.buf, '}')
}

// decode reads an object into v, recording its key set and keeping unknown
// keys verbatim. Members are visited in key order so the first error is
// deterministic; of duplicate keys the last wins, as in encoding/json.
func (t *artTable[T]) decode(v *T, raw json.RawMessage) error {
	ms, err := jsonObject(raw)
	if err != nil {
		return err
	}
	return t.decodeMembers(v, ms)
}

// decodeMembers is decode on an object already split into its members.
func (t *artTable[T]) decodeMembers(v *T, ms []member) error {
	sh := t.shapeOf(v)
	*sh = shape{index: t.index}
	slices.SortStableFunc(ms, func(a, b member) int { return strings.Compare(a.key, b.key) })
	for _, m := range ms {
		i, known := t.index[m.key]
		if known {
			sh.present[i/64] |= 1 << (i % 64)
		} else {
			if sh.extra == nil {
				sh.extra = make(map[string]json.RawMessage)
			}
			// Compacted: a canonical copy that does not pin the input.
			var buf bytes.Buffer
			if err := json.Compact(&buf, m.val); err != nil {
				return atKey(m.key, err)
			}
			sh.extra[m.key] = buf.Bytes()
			continue
		}
		if err := t.fields[i].dec(v, m.val); err != nil {
			return atKey(m.key, err)
		}
	}
	return nil
}

// codec returns the codec of T as a nested object.
func (t *artTable[T]) codec() artCodec[T] {
	return artCodec[T]{
		enc:    func(e *artEncoder, v T) { t.encode(e, &v) },
		encPtr: t.encode,
		dec: func(raw json.RawMessage) (T, error) {
			var v T
			err := t.decode(&v, raw)
			return v, err
		},
	}
}

// pathError is a decoding error at a place in the artifact.
type pathError struct {
	// Path locates the value, as in "request_timings[3].ttft_ms".
	Path string
	// Err says what is wrong with it, naming the value.
	Err error
}

var _ error = (*pathError)(nil)

// Error returns the path and what is wrong there: "request_timings[3].ttft_ms: want a number, ...".
func (e *pathError) Error() string { return e.Path + ": " + e.Err.Error() }

// Unwrap returns Err.
func (e *pathError) Unwrap() error { return e.Err }

// atKey places err under the object key.
func atKey(key string, err error) error { return under(key, err) }

// atIndex places err under the array index.
func atIndex(i int, err error) error { return under("["+strconv.Itoa(i)+"]", err) }

// under prefixes the path of err (a *pathError, else a new one) with the
// path segment seg: "key" or "[i]".
func under(seg string, err error) error {
	fe, ok := err.(*pathError)
	if !ok {
		return &pathError{Path: seg, Err: err}
	}
	if strings.HasPrefix(fe.Path, "[") {
		fe.Path = seg + fe.Path
	} else {
		fe.Path = seg + "." + fe.Path
	}
	return fe
}

// optionalMap is a string map field whose key the current shape writes
// only when the map is not nil.
func optionalMap[T any](key string, get func(*T) *map[string]string) artField[T] {
	f := fieldOf(key, get, mapCodec(stringMapKey[string](), stringCodec))
	f.omitNil = true
	f.isNil = func(t *T) bool { return *get(t) == nil }
	return f
}

// optionalSlice is a slice field whose key the current shape writes only
// when the slice is not nil.
func optionalSlice[T, V any](key string, get func(*T) *[]V, c artCodec[V]) artField[T] {
	f := fieldOf(key, get, sliceCodec(c))
	f.omitNil = true
	f.isNil = func(t *T) bool { return *get(t) == nil }
	return f
}

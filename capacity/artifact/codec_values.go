package artifact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Codecs of the JSON value types an artifact uses. A decoder's error names
// the offending value; the object and array decoders wrap it in a
// pathError whose Path grows as the error returns to the top, so no path
// string is built while decoding succeeds.

// jsonKind names the JSON type of raw for error messages.
func jsonKind(raw json.RawMessage) string {
	i := skipSpace(raw, 0)
	if i == len(raw) {
		return "nothing"
	}
	switch raw[i] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// jsonExcerpt is raw shortened for an error message.
func jsonExcerpt(raw json.RawMessage) string {
	const max = 40
	if len(raw) > max {
		return string(raw[:max]) + "..."
	}
	return string(raw)
}

func jsonTypeError(want string, raw json.RawMessage) error {
	return fmt.Errorf("want %s, got %s %s", want, jsonKind(raw), jsonExcerpt(raw))
}

func jsonNull(raw json.RawMessage) bool { return jsonKind(raw) == "null" }

// jsonObject returns the members of the object raw (valid JSON).
func jsonObject(raw json.RawMessage) ([]member, error) {
	if jsonKind(raw) != "an object" {
		return nil, jsonTypeError("an object", raw)
	}
	return splitObject(raw), nil
}

var intCodec = artCodec[int]{
	enc: func(e *artEncoder, v int) { e.int(int64(v)) },
	dec: func(raw json.RawMessage) (int, error) {
		v, err := int64Codec.dec(raw)
		if err != nil {
			return 0, err
		}
		if int64(int(v)) != v {
			return 0, fmt.Errorf("%d does not fit in int", v)
		}
		return int(v), nil
	},
}

var int64Codec = artCodec[int64]{
	enc: func(e *artEncoder, v int64) { e.int(v) },
	dec: func(raw json.RawMessage) (int64, error) {
		if jsonKind(raw) != "a number" {
			return 0, jsonTypeError("an integer", raw)
		}
		v, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("want an integer in the int64 range, got %s", jsonExcerpt(raw))
		}
		return v, nil
	},
}

var floatCodec = artCodec[float64]{
	enc: func(e *artEncoder, v float64) { e.float(v) },
	dec: func(raw json.RawMessage) (float64, error) {
		if jsonKind(raw) != "a number" {
			return 0, jsonTypeError("a number", raw)
		}
		v, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || math.IsInf(v, 0) {
			return 0, fmt.Errorf("%s is outside the float64 range", jsonExcerpt(raw))
		}
		return v, nil
	},
}

var stringCodec = artCodec[string]{
	enc: func(e *artEncoder, v string) { e.string(v) },
	dec: func(raw json.RawMessage) (string, error) {
		if jsonKind(raw) != "a string" {
			return "", jsonTypeError("a string", raw)
		}
		v, ok := decodeString(raw, bytes.IndexByte(raw, '\\') >= 0)
		if !ok {
			return "", jsonTypeError("a string", raw)
		}
		return v, nil
	},
}

var boolCodec = artCodec[bool]{
	enc: func(e *artEncoder, v bool) { e.bool(v) },
	dec: func(raw json.RawMessage) (bool, error) {
		var v bool
		if jsonKind(raw) != "a boolean" || json.Unmarshal(raw, &v) != nil {
			return false, jsonTypeError("a boolean", raw)
		}
		return v, nil
	},
}

// stringTypeCodec is the codec of a named string type such as FailureClass.
func stringTypeCodec[S ~string]() artCodec[S] {
	return artCodec[S]{
		enc: func(e *artEncoder, v S) { e.string(string(v)) },
		dec: func(raw json.RawMessage) (S, error) {
			v, err := stringCodec.dec(raw)
			return S(v), err
		},
	}
}

// nullableCodec is c with JSON null as the nil pointer.
func nullableCodec[V any](c artCodec[V]) artCodec[*V] {
	return artCodec[*V]{
		enc: func(e *artEncoder, v *V) {
			if v == nil {
				e.null()
				return
			}
			c.write(e, v)
		},
		dec: func(raw json.RawMessage) (*V, error) {
			if jsonNull(raw) {
				return nil, nil
			}
			v, err := c.dec(raw)
			if err != nil {
				return nil, err
			}
			return &v, nil
		},
	}
}

// sliceCodec is a JSON array of c; nil is written as [].
func sliceCodec[V any](c artCodec[V]) artCodec[[]V] {
	return artCodec[[]V]{
		enc: func(e *artEncoder, vs []V) {
			if len(vs) == 0 {
				e.buf = append(e.buf, '[', ']')
				return
			}
			e.buf = append(e.buf, '[')
			e.depth++
			for i := range vs {
				if i > 0 {
					e.buf = append(e.buf, ',')
				}
				e.newline()
				c.write(e, &vs[i])
			}
			e.depth--
			e.newline()
			e.buf = append(e.buf, ']')
		},
		dec: func(raw json.RawMessage) ([]V, error) {
			if jsonKind(raw) != "an array" {
				return nil, jsonTypeError("an array", raw)
			}
			items := splitArray(raw)
			vs := make([]V, len(items))
			for i, item := range items {
				v, err := c.dec(item)
				if err != nil {
					return nil, atIndex(i, err)
				}
				vs[i] = v
			}
			return vs, nil
		},
	}
}

// mapCodec is a JSON object with arbitrary keys; key converts a JSON key to K
// and back. Keys are written sorted as strings; nil is written as {}.
func mapCodec[K comparable, V any](key mapKeyCodec[K], c artCodec[V]) artCodec[map[K]V] {
	return artCodec[map[K]V]{
		enc: func(e *artEncoder, m map[K]V) {
			type kv struct {
				k string
				v V
			}
			items := make([]kv, 0, len(m))
			for k, v := range m {
				items = append(items, kv{key.format(k), v})
			}
			slices.SortFunc(items, func(a, b kv) int { return strings.Compare(a.k, b.k) })
			if len(items) == 0 {
				e.buf = append(e.buf, '{', '}')
				return
			}
			e.buf = append(e.buf, '{')
			e.depth++
			for i, it := range items {
				if i > 0 {
					e.buf = append(e.buf, ',')
				}
				e.newline()
				e.string(it.k)
				e.buf = append(e.buf, ':', ' ')
				c.enc(e, it.v)
			}
			e.depth--
			e.newline()
			e.buf = append(e.buf, '}')
		},
		dec: func(raw json.RawMessage) (map[K]V, error) {
			ms, err := jsonObject(raw)
			if err != nil {
				return nil, err
			}
			out := make(map[K]V, len(ms))
			for _, m := range ms {
				k, err := key.parse(m.key)
				if err != nil {
					return nil, fmt.Errorf("key %q: %w", m.key, err)
				}
				v, err := c.dec(m.val)
				if err != nil {
					return nil, atKey(m.key, err)
				}
				out[k] = v
			}
			return out, nil
		},
	}
}

// mapKeyCodec converts map keys to and from their JSON string form.
type mapKeyCodec[K comparable] struct {
	format func(K) string
	parse  func(string) (K, error)
}

func stringMapKey[S ~string]() mapKeyCodec[S] {
	return mapKeyCodec[S]{
		format: func(k S) string { return string(k) },
		parse:  func(s string) (S, error) { return S(s), nil },
	}
}

// intMapKey accepts only the canonical decimal form, so a key reads back and
// writes out unchanged.
var intMapKey = mapKeyCodec[int]{
	format: strconv.Itoa,
	parse: func(s string) (int, error) {
		v, err := strconv.Atoi(s)
		if err != nil || strconv.Itoa(v) != s {
			return 0, fmt.Errorf("want a decimal integer key")
		}
		return v, nil
	},
}

// nullableSlice is a JSON array of c, or null for a nil slice (an empty
// non-nil slice is []).
func nullableSlice[V any](c artCodec[V]) artCodec[[]V] {
	arr := sliceCodec(c)
	return artCodec[[]V]{
		enc: func(e *artEncoder, vs []V) {
			if vs == nil {
				e.null()
				return
			}
			arr.enc(e, vs)
		},
		dec: func(raw json.RawMessage) ([]V, error) {
			if jsonNull(raw) {
				return nil, nil
			}
			vs, err := arr.dec(raw)
			if vs == nil && err == nil {
				vs = []V{}
			}
			return vs, err
		},
	}
}

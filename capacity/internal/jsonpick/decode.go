package jsonpick

import (
	"bytes"
	"errors"
	"slices"
)

// Errors of a payload that is not one JSON object.
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

// Value is what a Decoder read of one member of its schema.
type Value struct {
	// Kind is the JSON type of the member's value, Absent when the member
	// is not in its object (or that object is absent or null). An Object
	// or Array member is Object or Array when its value is one, and Absent
	// when it is null.
	Kind Kind
	// Bytes is a Text member's string, unescaped (nil unless Kind is
	// String), or a Raw member's JSON text (nil when Kind is Null or
	// Absent). See the package documentation for how long it is valid.
	Bytes []byte
	// Int is an Int member's count.
	Int Int
	// Len is an Array member's number of elements.
	Len int
}

// Text returns a Text member's value as a Text.
func (v *Value) Text() Text {
	if v.Kind != String {
		return Text{Kind: v.Kind}
	}
	return Text{Kind: String, Bytes: v.Bytes}
}

// A Decoder decodes payloads with one Schema, one after the other. Its
// storage (the values, the array elements, the buffer of unescaped text)
// is kept from one call to the next, so that decoding allocates only while
// the payloads grow. A Decoder is not safe for concurrent use.
type Decoder struct {
	s     *Schema
	vals  []Value
	elems [][]Value // per array of the schema, arrays[a].slots values per element
	// buf holds the unescaped strings of the current payload; spans says
	// which value each belongs to, set once the payload is decoded (buf
	// may move while it grows).
	buf       []byte
	spans     []span
	stack     SkipStack
	fallbacks int
	// varying is the slots of the text that varies from one payload of a
	// kept shape to the next (Repeat), nil when shapes are not kept; nums
	// are the integers not read of the current payload, the shape's holes
	// (repeat.go).
	varying []Slot
	nums    []hole
	shape   shape
	// repeats counts the payloads decoded as repeats; repeated says the
	// values are in the shape's form (the last payload was one), kept
	// that the last payload became the shape, again that the last payload
	// repeated the one before it (Again).
	repeats               int
	repeated, kept, again bool
}

// span is the place in Decoder.buf of the unescaped text of one value.
type span struct {
	scope, elem, slot int
	off, end          int
}

// NewDecoder returns a Decoder of payloads with the members of s.
func NewDecoder(s *Schema) *Decoder {
	return &Decoder{s: s, vals: make([]Value, s.slots), elems: make([][]Value, len(s.arrays))}
}

// Decode decodes one payload. It returns ErrNotObject, ErrTrailingData or
// a *MalformedError when the payload is not exactly one JSON object that
// encoding/json decodes into the schema's structs (and every value is
// then Absent); the decoder may be used again after an error. The values
// are valid until the next call (see the package documentation).
func (d *Decoder) Decode(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		d.reset()
		return ErrNotObject
	}
	if d.repeat(data) {
		d.repeats++
		return nil
	}
	d.reset()
	end := d.object(data, 0, 0, d.vals, 0, 0)
	if end < 0 {
		d.fallbacks++
		d.reset()
		if err := d.fallback(data); err != nil {
			d.reset()
			return err
		}
		d.finish()
		return nil
	}
	if end != len(data) {
		d.reset()
		return ErrTrailingData
	}
	d.finish()
	d.remember(data)
	return nil
}

// Value returns the value of the member at s, a slot of the payload's
// scope (not of an array's elements).
func (d *Decoder) Value(s Slot) *Value {
	if s.scope != 0 {
		panic("jsonpick: Value of an array element's member: use Elem")
	}
	return &d.vals[s.index]
}

// Elem returns the value of the member at s in element i of its array: s
// is the slot of a member of the array's elements, and i is below the
// array member's Len.
func (d *Decoder) Elem(s Slot, i int) *Value {
	if s.scope == 0 {
		panic("jsonpick: Elem of a member that is not in an array's elements: use Value")
	}
	a := s.scope - 1
	return &d.elems[a][i*d.s.arrays[a].slots+s.index]
}

// Fallbacks returns the number of payloads decoded by encoding/json so far
// (see the package documentation).
func (d *Decoder) Fallbacks() int { return d.fallbacks }

// reset forgets the previous payload, keeping the storage; the values are
// cleared so that they hold no reference to it.
func (d *Decoder) reset() {
	clear(d.vals)
	for a := range d.elems {
		clear(d.elems[a])
		d.elems[a] = d.elems[a][:0]
	}
	d.buf = d.buf[:0]
	d.spans = d.spans[:0]
	d.nums = d.nums[:0]
	d.repeated, d.kept, d.again = false, false, false
}

// finish points the unescaped texts at their place in buf.
func (d *Decoder) finish() {
	for _, s := range d.spans {
		d.at(s.scope, s.elem, s.slot).Bytes = d.buf[s.off:s.end:s.end]
	}
}

// at returns the value of slot in scope (in element elem of an array's).
func (d *Decoder) at(scope, elem, slot int) *Value {
	if scope == 0 {
		return &d.vals[slot]
	}
	return &d.elems[scope-1][elem*d.s.arrays[scope-1].slots+slot]
}

// element appends a cleared element to array a and returns its values.
func (d *Decoder) element(a int) []Value {
	n, k := len(d.elems[a]), d.s.arrays[a].slots
	el := slices.Grow(d.elems[a], k)[:n+k]
	clear(el[n:])
	d.elems[a] = el
	return el[n : n+k : n+k]
}

// object decodes the object starting at b[i] == '{' whose members are
// those of level li, into vals (the values of scope, element elem).
func (d *Decoder) object(b []byte, i int, li int, vals []Value, scope, elem int) int {
	lv := &d.s.levels[li]
	i = SkipSpace(b, i+1)
	if i >= len(b) {
		return Fail
	}
	if b[i] == '}' {
		return i + 1
	}
	var seen uint64
	for {
		// A member name (only an ASCII one without escapes is read here:
		// encoding/json alone decides which member another selects), its
		// colon and the start of its value at v.
		if i >= len(b) || b[i] != '"' {
			return Fail
		}
		j, upper := NameEnd(b, i+1)
		if j >= len(b) || b[j] != '"' {
			return Fail
		}
		name := b[i+1 : j]
		v := SkipSpace(b, j+1)
		if v >= len(b) || b[v] != ':' {
			return Fail
		}
		if v = SkipSpace(b, v+1); v >= len(b) {
			return Fail
		}
		f := -1
		if upper {
			if lv.folds(name) {
				return Fail
			}
		} else {
			f = lv.lookup(name)
		}
		switch {
		case f >= 0:
			if seen&(1<<f) != 0 {
				return Fail // a duplicate: encoding/json merges or replaces
			}
			seen |= 1 << f
			i = d.member(b, v, lv, f, vals, scope, elem)
		case b[v] == '"': // most members not read are strings
			i, _ = StringEnd(b, v)
		case b[v] == 'n':
			i = LiteralEnd(b, v)
		case IsDigit(b[v]):
			i = NumberEnd(b, v)
			if d.varying != nil && i > v && digits(b[v:i]) {
				d.nums = append(d.nums, hole{start: v, end: i})
			}
		default:
			i = ValueEnd(b, v, &d.stack)
		}
		if i < 0 {
			return Fail
		}
		i = SkipSpace(b, i)
		if i >= len(b) {
			return Fail
		}
		switch b[i] {
		case ',':
			i = SkipSpace(b, i+1)
			continue
		case '}':
			return i + 1
		}
		return Fail
	}
}

// member decodes the value of member f of lv starting at b[i] and returns
// the index after it.
func (d *Decoder) member(b []byte, i int, lv *level, f int, vals []Value, scope, elem int) int {
	slot := lv.slots[f]
	val := &vals[slot]
	switch lv.kinds[f] {
	case mText:
		if b[i] != '"' {
			val.Kind = KindOf(b[i])
			return ValueEnd(b, i, &d.stack)
		}
		end, escaped := StringEnd(b, i)
		if end < 0 {
			return Fail
		}
		d.setString(val, b[i+1:end-1], escaped, scope, elem, slot)
		return end
	case mInt:
		end := ValueEnd(b, i, &d.stack)
		if end >= 0 {
			val.Kind = KindOf(b[i])
			val.Int, d.buf = ParseInt(b[i:end], d.buf)
		}
		return end
	case mRaw:
		end := ValueEnd(b, i, &d.stack)
		if end >= 0 {
			if val.Kind = KindOf(b[i]); val.Kind != Null {
				val.Bytes = b[i:end:end]
			}
		}
		return end
	case mObject:
		switch b[i] {
		case '{':
			val.Kind = Object
			return d.object(b, i, lv.child[f], vals, scope, elem)
		case 'n':
			return LiteralEnd(b, i)
		}
		return Fail
	}
	// mArray
	switch b[i] {
	case '[':
		val.Kind = Array
		return d.array(b, i, lv.child[f], val)
	case 'n':
		return LiteralEnd(b, i)
	}
	return Fail
}

// array decodes the elements of array a starting at b[i] == '[': objects
// and nulls (an element with nothing set), counted in val.Len.
func (d *Decoder) array(b []byte, i int, a int, val *Value) int {
	i = SkipSpace(b, i+1)
	if i >= len(b) {
		return Fail
	}
	if b[i] == ']' {
		return i + 1
	}
	lvl := d.s.arrays[a].level
	for {
		e := val.Len
		val.Len++
		el := d.element(a)
		switch b[i] {
		case '{':
			i = d.object(b, i, lvl, el, a+1, e)
		case 'n':
			i = LiteralEnd(b, i)
		default:
			return Fail
		}
		if i < 0 {
			return Fail
		}
		i = SkipSpace(b, i)
		if i >= len(b) {
			return Fail
		}
		switch b[i] {
		case ',':
			if i = SkipSpace(b, i+1); i >= len(b) {
				return Fail
			}
			continue
		case ']':
			return i + 1
		}
		return Fail
	}
}

// setString sets val, the value at slot of scope (element elem), to the
// contents s of a valid JSON string: s itself without escapes, else its
// text unescaped in buf.
func (d *Decoder) setString(val *Value, s []byte, escaped bool, scope, elem, slot int) {
	val.Kind = String
	if !escaped {
		val.Bytes = s[:len(s):len(s)]
		return
	}
	off := len(d.buf)
	d.buf = AppendUnescaped(d.buf, s)
	d.spans = append(d.spans, span{scope: scope, elem: elem, slot: slot, off: off, end: len(d.buf)})
}

// ParseInt returns the count a valid JSON value v denotes, as json.Number
// decodes it: a number literal, or a string holding one. A quoted number
// with escapes is unescaped in scratch space after the end of buf, which
// is returned, grown, with its length unchanged.
func ParseInt(v, buf []byte) (Int, []byte) {
	switch c := v[0]; {
	case c == 'n':
		return Int{Kind: IntNull}, buf
	case c == '-' || IsDigit(c):
		return Classify(v), buf
	case c != '"':
		return Int{Kind: IntNotNumber}, buf
	}
	s := v[1 : len(v)-1]
	off := len(buf)
	if bytes.IndexByte(s, '\\') >= 0 {
		buf = AppendUnescaped(buf, s)
		s = buf[off:]
	}
	n := Int{Kind: IntNotNumber}
	if IsNumber(s) {
		n = Classify(s)
		n.Quoted = true
	}
	return n, buf[:off]
}

// messageSchema reads the message of an error object: its own "message"
// ({"message":...,"type":...,"code":...}), or its "error" member's
// (Anthropic's {"type":"error","error":{"type":...,"message":...}}).
var messageSchema = Compile(Str("message"), Obj("error", Str("message")))

var (
	messageSlot       = messageSchema.Slot("message")
	nestedMessageSlot = messageSchema.Slot("error.message")
)

// Message returns the message of a JSON error object raw: its "message"
// member when that is a non-empty string, else that of its "error"
// member; ok is false when raw is not such an object. It allocates: it is
// for the one error that ends a stream.
func Message(raw []byte) (msg string, ok bool) {
	d := NewDecoder(messageSchema)
	if d.Decode(raw) != nil {
		return "", false
	}
	for _, s := range []Slot{messageSlot, nestedMessageSlot} {
		if t := d.Value(s).Text(); t.NonEmpty() {
			return string(t.Bytes), true
		}
	}
	return "", false
}

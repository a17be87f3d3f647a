package jsonpick

import (
	"bytes"
	"encoding/json"
	"reflect"
)

// fallback decodes data, trimmed and beginning with '{', with a
// json.Decoder into the schema's structs (Compile builds them: every leaf
// a json.RawMessage, which accepts any value as the leaves of the fast
// path do; every object a pointer to a struct; every array a slice of
// structs), so that the structure, the name matching, duplicates and type
// errors are encoding/json's. The leaves are then read by the fast path's
// own code.
func (d *Decoder) fallback(data []byte) error {
	v := reflect.New(d.s.typ)
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v.Interface()); err != nil {
		return &MalformedError{Err: err}
	}
	if dec.InputOffset() != int64(len(data)) {
		return ErrTrailingData
	}
	d.fill(0, v.Elem(), d.vals, 0, 0)
	return nil
}

// fill reads the struct sv of level li into vals, the values of scope
// (element elem of an array's).
func (d *Decoder) fill(li int, sv reflect.Value, vals []Value, scope, elem int) {
	lv := &d.s.levels[li]
	for f := range lv.names {
		fv := sv.Field(f)
		slot := lv.slots[f]
		val := &vals[slot]
		switch lv.kinds[f] {
		case mObject:
			if !fv.IsNil() {
				val.Kind = Object
				d.fill(lv.child[f], fv.Elem(), vals, scope, elem)
			}
			continue
		case mArray:
			if fv.IsNil() {
				continue
			}
			val.Kind = Array
			a := lv.child[f]
			for e := range fv.Len() {
				val.Len++
				d.fill(d.s.arrays[a].level, fv.Index(e), d.element(a), a+1, e)
			}
			continue
		}
		raw := fv.Bytes()
		if len(raw) == 0 {
			continue // absent
		}
		val.Kind = KindOf(raw[0])
		switch lv.kinds[f] {
		case mText:
			if val.Kind == String {
				s := raw[1 : len(raw)-1]
				d.setString(val, s, bytes.IndexByte(s, '\\') >= 0, scope, elem, slot)
			}
		case mInt:
			val.Int, d.buf = ParseInt(raw, d.buf)
		case mRaw:
			if val.Kind != Null {
				val.Bytes = raw
			}
		}
	}
}

package jsonpick

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// A Member is one member of an object that a Schema reads: a leaf (Str,
// Count or Raw), an object whose own members are read (Obj), or an array
// of such objects (Objs). Build members with those functions.
type Member struct {
	name    string
	kind    memberKind
	members []Member
}

// memberKind is what a member's value is read as.
type memberKind uint8

const (
	mText memberKind = iota + 1
	mInt
	mRaw
	mObject
	mArray
)

// Str is a member read as a [Text]: a JSON string's text, or the kind of
// any other value.
func Str(name string) Member { return Member{name: name, kind: mText} }

// Count is a member read as an [Int]: a JSON number (or a string holding
// one), classified.
func Count(name string) Member { return Member{name: name, kind: mInt} }

// Raw is a member whose value is kept as its JSON text, whatever its type.
func Raw(name string) Member { return Member{name: name, kind: mRaw} }

// Obj is a member whose value, an object or null, has the given members
// read; any other value is a type error, as encoding/json reports decoding
// it into a struct.
func Obj(name string, members ...Member) Member {
	return Member{name: name, kind: mObject, members: members}
}

// Objs is a member whose value, an array or null, holds objects (or
// nulls: an element with nothing set) each of which has the given members
// read. An array's elements may not hold arrays of their own.
func Objs(name string, members ...Member) Member {
	return Member{name: name, kind: mArray, members: members}
}

// A Slot is where a Decoder keeps the value of one member of a Schema:
// the payload's own scope, or that of one array's elements.
type Slot struct {
	scope int // 0: the payload; a+1: the elements of array a
	index int
}

// maxLevelMembers bounds the members of one object of a schema (each has
// a bit in the set of members seen).
const maxLevelMembers = 64

// maxNameLen bounds the length of a member name of a schema, so that a
// folded name is compared without allocating.
const maxNameLen = 63

// level is one object of a schema: its members, by name.
type level struct {
	names []string
	kinds []memberKind
	slots []int // the member's slot in the level's scope
	child []int // an object's level; an array's index in Schema.arrays
	lens  uint64
}

// array is one Array member: the level of its elements and the number of
// slots of an element's scope.
type array struct {
	level, slots int
}

// A Schema is the members a Decoder reads of a payload, compiled. It is
// immutable and safe for concurrent use; build it once with Compile.
type Schema struct {
	levels []level
	arrays []array
	slots  int             // slots of the payload's scope
	paths  map[string]Slot // "a.b.c" for every member
	typ    reflect.Type    // the struct encoding/json decodes a payload into
}

// Compile compiles the members of the payload object. It panics on a
// schema it cannot read: a name used twice in one object, an empty or
// over-long name (more than 63 bytes), one with an upper-case letter, an
// escape or a non-ASCII byte (encoding/json matches those by folding,
// which the fast path leaves to it), more than 64 members in one object,
// or an array inside an array's elements.
func Compile(members ...Member) *Schema {
	s := &Schema{paths: map[string]Slot{}}
	s.typ = s.compile(members, "", 0, &s.slots)
	return s
}

// compile adds the level of members, whose slots are in scope (numbered
// from *next), and returns the struct type encoding/json decodes it into.
func (s *Schema) compile(members []Member, prefix string, scope int, next *int) reflect.Type {
	if len(members) > maxLevelMembers {
		panic(fmt.Sprintf("jsonpick: %d members in %q: at most %d", len(members), prefix, maxLevelMembers))
	}
	li := len(s.levels)
	s.levels = append(s.levels, level{})
	lv := level{}
	fields := make([]reflect.StructField, len(members))
	for i, m := range members {
		if !validName(m.name) {
			panic(fmt.Sprintf("jsonpick: member name %q of %q: want 1 to %d lower-case ASCII bytes without quotes or backslashes", m.name, prefix, maxNameLen))
		}
		for _, n := range lv.names {
			if n == m.name {
				panic(fmt.Sprintf("jsonpick: member %q twice in %q", m.name, prefix))
			}
		}
		path := prefix + m.name
		slot := *next
		*next++
		s.paths[path] = Slot{scope: scope, index: slot}
		child := -1
		typ := reflect.TypeFor[json.RawMessage]()
		switch m.kind {
		case mObject:
			child = len(s.levels)
			typ = reflect.PointerTo(s.compile(m.members, path+".", scope, next))
		case mArray:
			if scope != 0 {
				panic(fmt.Sprintf("jsonpick: array %q inside an array's elements", path))
			}
			child = len(s.arrays)
			s.arrays = append(s.arrays, array{})
			n := 0
			lvl := len(s.levels)
			elem := s.compile(m.members, path+".", child+1, &n)
			s.arrays[child] = array{level: lvl, slots: n}
			typ = reflect.SliceOf(elem)
		}
		lv.names = append(lv.names, m.name)
		lv.kinds = append(lv.kinds, m.kind)
		lv.slots = append(lv.slots, slot)
		lv.child = append(lv.child, child)
		lv.lens |= 1 << len(m.name)
		fields[i] = reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: typ, Tag: reflect.StructTag(`json:"` + m.name + `"`)}
	}
	s.levels[li] = lv
	return reflect.StructOf(fields)
}

// validName reports whether a schema can hold name: the fast path matches
// it byte for byte and folds only ASCII upper-case letters.
func validName(name string) bool {
	if name == "" || len(name) > maxNameLen {
		return false
	}
	for _, c := range []byte(name) {
		if c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || ('A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// Slot returns the slot of the member at path, the names from the
// payload down joined by dots ("response.usage.input_tokens"; an array's
// element members as "choices.text"). It panics on a path the schema does
// not have.
func (s *Schema) Slot(path string) Slot {
	sl, ok := s.paths[path]
	if !ok {
		panic(fmt.Sprintf("jsonpick: no member %q in the schema", path))
	}
	return sl
}

// lookup returns the index in lv of the member a name without escapes,
// non-ASCII bytes or upper-case letters selects, or -1.
func (lv *level) lookup(name []byte) int {
	if len(name) > maxNameLen || lv.lens&(1<<len(name)) == 0 {
		return -1 // no member of this length
	}
	for i, n := range lv.names {
		if n == string(name) {
			return i
		}
	}
	return -1
}

// folds reports whether a name with upper-case ASCII letters folds to a
// member of lv, which encoding/json would then select.
func (lv *level) folds(name []byte) bool {
	if len(name) > maxNameLen || lv.lens&(1<<len(name)) == 0 {
		return false
	}
	var low [maxNameLen]byte
	for i, c := range name {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		low[i] = c
	}
	return lv.lookup(low[:len(name)]) >= 0
}

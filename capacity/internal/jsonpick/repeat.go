package jsonpick

import (
	"unsafe"
)

// A stream's events repeat one another: every text delta of a Responses,
// Messages or completions stream is the same bytes but for its text and,
// in some servers' streams, a counter (Responses' sequence_number). A
// Decoder told which members vary (Repeat) keeps, after a payload decoded
// in full whose varying text is a non-empty string without escapes and
// which has no other escaped string, that payload's shape: its bytes with
// the holes left out (the text's contents, and the digits of every member
// not read whose value is an integer without sign, fraction or exponent),
// and the values it decoded, each of their bytes as a place in one of the
// pieces between the holes. A next payload that is the same pieces with,
// in each hole, digits that form a JSON integer (for a number) or a string
// without escapes (for the text) is the same sequence of JSON tokens but
// for those values, none of which is read but the text: its decoding is
// the kept values with the text, which Decode returns without scanning
// the rest. A payload of any other shape is decoded in full, and becomes
// the kept shape when it qualifies (the kept one stays otherwise).

// A shape is the kept form of the last qualifying payload.
type shape struct {
	ok bool
	// bytes is the payload without its holes; piece k of it is
	// bytes[pieces[k]:pieces[k+1]], and hole k follows piece k.
	bytes  []byte
	pieces []int
	holes  []hole
	// vals and elems are the values the payload decoded, their bytes
	// placed by places.
	vals   []Value
	elems  [][]Value
	places []place
	// text is where the varying text's value is; starts is scratch, the
	// start in the payload being matched of each piece.
	text   place
	starts []int
	// last is the last qualifying payload, whose integers tell which of
	// the next one's vary.
	last struct {
		ok          bool
		bytes       []byte
		text        hole
		nums, holes []hole
		vary        uint64 // the integers (by index in nums) that vary
	}
}

// A hole is a varying part of a shape's payloads: the contents of the
// varying string (text) or the digits of an integer not read.
type hole struct {
	text       bool
	start, end int // in the payload the shape was taken from
}

// A place is a value of a shape with bytes in its payload: the value
// (scope and index, as at), and its bytes, n long at off from the start
// of piece.
type place struct {
	scope, elem, slot int
	piece, off, n     int
}

// Repeat makes d keep the shape of the payloads it decodes (see above),
// the string at one of slots being the text that varies: the first of
// them that a payload sets to a non-empty string. A slot of an array's
// elements is the member of its first element, of an array that has one.
// It returns d.
func (d *Decoder) Repeat(slots ...Slot) *Decoder {
	d.varying = slots
	return d
}

// Again reports whether the last payload decoded repeated the shape of
// the one before it (a repeat after a repeat, or after the payload that
// became the shape): every value is then that payload's but for its bytes,
// which are at their places in the new payload, and the varying text.
func (d *Decoder) Again() bool { return d.again }

// Moved points *b, bytes kept from the value v of the last payload, at
// v's bytes now, when it is not nil: after a payload that repeated the
// last one (Again), each value's bytes are at their places in the new
// payload, and a nil stays nil. Writing only what is set spares the write
// barrier of a nil written over nil.
func Moved(b *[]byte, v *Value) {
	if *b != nil {
		*b = v.Bytes
	}
}

// Repeats returns the number of payloads decoded as repeats of a kept
// shape so far.
func (d *Decoder) Repeats() int { return d.repeats }

// candidate returns the place of the first varying slot that holds a
// non-empty string, or false.
func (d *Decoder) candidate() (place, bool) {
	for _, s := range d.varying {
		p := place{scope: s.scope, slot: s.index}
		if s.scope != 0 && len(d.elems[s.scope-1]) != d.s.arrays[s.scope-1].slots {
			continue // not an array of one element
		}
		if v := d.at(p.scope, 0, p.slot); v.Kind == String && len(v.Bytes) > 0 {
			return p, true
		}
	}
	return place{}, false
}

// remember keeps the shape of data, which d decoded in full on its fast
// path, when it qualifies.
func (d *Decoder) remember(data []byte) {
	if d.varying == nil || len(d.spans) != 0 {
		return // an escaped string's bytes are not in data
	}
	text, ok := d.candidate()
	if !ok {
		return
	}
	tv := d.at(text.scope, 0, text.slot)
	off, ok := OffsetIn(data, tv.Bytes)
	if !ok {
		return
	}
	s := &d.shape
	s.ok = false
	// The integers that vary: those that differ from the last qualifying
	// payload's when this one has its skeleton (the same bytes but for the
	// text and the integers), and those that varied before it.
	t := hole{text: true, start: off, end: off + len(tv.Bytes)}
	last := &s.last
	vary := uint64(0)
	if last.ok && len(last.nums) == len(d.nums) {
		s.holes = merge(s.holes[:0], t, d.nums, all)
		last.holes = merge(last.holes[:0], last.text, last.nums, all)
		if sameSkeleton(data, s.holes, last.bytes, last.holes) {
			vary = last.vary
			for i, n := range d.nums[:min(len(d.nums), 64)] {
				if string(data[n.start:n.end]) != string(last.bytes[last.nums[i].start:last.nums[i].end]) {
					vary |= 1 << i
				}
			}
		}
	}
	last.ok, last.text, last.vary = true, t, vary
	last.bytes = append(last.bytes[:0], data...)
	last.nums = append(last.nums[:0], d.nums...)
	// The holes in payload order: the text and the integers that vary.
	s.holes = merge(s.holes[:0], t, d.nums, vary)
	// The pieces between them.
	s.bytes, s.pieces = s.bytes[:0], s.pieces[:0]
	from := 0
	for _, h := range s.holes {
		s.pieces = append(s.pieces, len(s.bytes))
		s.bytes = append(s.bytes, data[from:h.start]...)
		from = h.end
	}
	s.pieces = append(s.pieces, len(s.bytes))
	s.bytes = append(s.bytes, data[from:]...)
	s.pieces = append(s.pieces, len(s.bytes))
	// The values, and the place of each one's bytes.
	s.places = s.places[:0]
	if !s.place(data, d.vals, 0, 0, text) {
		return
	}
	for a, el := range d.elems {
		k := d.s.arrays[a].slots
		for e := 0; e < len(el)/max(k, 1); e++ {
			if !s.place(data, el[e*k:(e+1)*k], a+1, e, text) {
				return
			}
		}
	}
	s.vals = append(s.vals[:0], d.vals...)
	if s.elems == nil {
		s.elems = make([][]Value, len(d.elems))
	}
	for a := range d.elems {
		s.elems[a] = append(s.elems[a][:0], d.elems[a]...)
	}
	s.text = text
	s.starts = append(s.starts[:0], make([]int, len(s.holes)+1)...)
	s.ok = true
	d.repeated, d.kept = false, true // d's values are data's, not yet the shape's
}

// all selects every integer of a payload (merge).
const all = ^uint64(0)

// merge appends to holes those of nums (in payload order) whose bit is set
// in mask (the first 64 of them; none after), with the text among them.
func merge(holes []hole, text hole, nums []hole, mask uint64) []hole {
	inserted := false
	for i, n := range nums {
		if !inserted && text.start < n.start {
			holes, inserted = append(holes, text), true
		}
		if i < 64 && mask&(1<<i) != 0 {
			holes = append(holes, n)
		}
	}
	if !inserted {
		holes = append(holes, text)
	}
	return holes
}

// sameSkeleton reports whether a and b, each with its holes (as many),
// are the same bytes between the holes.
func sameSkeleton(a []byte, ha []hole, b []byte, hb []hole) bool {
	if len(ha) != len(hb) {
		return false
	}
	fa, fb := 0, 0
	for k := range ha {
		if string(a[fa:ha[k].start]) != string(b[fb:hb[k].start]) {
			return false
		}
		fa, fb = ha[k].end, hb[k].end
	}
	return string(a[fa:]) == string(b[fb:])
}

// place adds the places of the values vals (of scope, element elem) that
// have bytes, but the text's, and reports whether each lies in one piece.
func (s *shape) place(data []byte, vals []Value, scope, elem int, text place) bool {
	for i := range vals {
		v := &vals[i]
		if v.Bytes == nil || (scope == text.scope && elem == 0 && i == text.slot) {
			continue
		}
		p := place{scope: scope, elem: elem, slot: i, n: len(v.Bytes)}
		if p.n > 0 {
			off, ok := OffsetIn(data, v.Bytes)
			if !ok {
				return false
			}
			// The piece it lies in: after hole k-1, before hole k.
			k := 0
			for k < len(s.holes) && s.holes[k].end <= off {
				k++
			}
			if k < len(s.holes) && off+p.n > s.holes[k].start {
				return false // across a hole (cannot happen: a hole is a token of its own)
			}
			p.piece, p.off = k, off
			if k > 0 {
				p.off -= s.holes[k-1].end
			}
		}
		s.places = append(s.places, p)
	}
	return true
}

// repeat decodes data when it has the kept shape (see above), and reports
// whether it did.
func (d *Decoder) repeat(data []byte) bool {
	s := &d.shape
	if !s.ok || len(data) < len(s.bytes) {
		return false
	}
	pos := 0
	var text []byte
	for k, h := range s.holes {
		piece := s.bytes[s.pieces[k]:s.pieces[k+1]]
		if len(data)-pos < len(piece) || string(data[pos:pos+len(piece)]) != string(piece) {
			return false
		}
		s.starts[k] = pos
		pos += len(piece)
		if h.text {
			// The piece ends with the string's opening quote.
			end, escaped := StringEnd(data, pos-1)
			if end < 0 || escaped {
				return false
			}
			text = data[pos : end-1 : end-1]
			pos = end - 1
			continue
		}
		j := pos
		for j < len(data) && IsDigit(data[j]) {
			j++
		}
		if j == pos || (data[pos] == '0' && j > pos+1) {
			return false
		}
		pos = j
	}
	last := s.bytes[s.pieces[len(s.holes)]:]
	if string(data[pos:]) != string(last) {
		return false
	}
	s.starts[len(s.holes)] = pos
	d.again, d.kept = d.repeated || d.kept, false
	if !d.repeated {
		// The values take the shape's once; a following repeat changes
		// only their bytes.
		copy(d.vals, s.vals)
		for a := range d.elems {
			d.elems[a] = append(d.elems[a][:0], s.elems[a]...)
		}
		d.buf, d.spans = d.buf[:0], d.spans[:0]
		d.repeated = true
	}
	for _, p := range s.places {
		v := d.at(p.scope, p.elem, p.slot)
		if p.n == 0 {
			v.Bytes = data[:0:0]
			continue
		}
		off := s.starts[p.piece] + p.off
		v.Bytes = data[off : off+p.n : off+p.n]
	}
	d.at(s.text.scope, 0, s.text.slot).Bytes = text
	return true
}

// OffsetIn returns the offset of t in data when t is a piece of data's
// bytes (an empty t too, at any offset up to len(data)).
func OffsetIn(data, t []byte) (int, bool) {
	if len(data) == 0 {
		return 0, false
	}
	d := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(t)))
	if p < d || p+uintptr(len(t)) > d+uintptr(len(data)) {
		return 0, false
	}
	return int(p - d), true
}

// digits reports whether a number literal is an integer without sign,
// fraction or exponent.
func digits(n []byte) bool {
	for _, c := range n {
		if !IsDigit(c) {
			return false
		}
	}
	return true
}

package jsonpick

import "strconv"

// ShapeOf returns the kept shape of d: its pieces, and for each hole after
// a piece whether it is the text (else an integer); ok false when none is
// kept.
func ShapeOf(d *Decoder) (pieces [][]byte, text []bool, ok bool) {
	s := &d.shape
	if !s.ok {
		return nil, nil, false
	}
	for k := range len(s.pieces) - 1 {
		pieces = append(pieces, s.bytes[s.pieces[k]:s.pieces[k+1]])
	}
	for _, h := range s.holes {
		text = append(text, h.text)
	}
	return pieces, text, true
}

// Vary returns the last qualifying payload d decoded with text in place of
// its varying text and n in place of every integer not read.
func Vary(d *Decoder, text []byte, n uint64) ([]byte, bool) {
	l := &d.shape.last
	if !l.ok {
		return nil, false
	}
	var b []byte
	from := 0
	for _, h := range merge(nil, l.text, l.nums, all) {
		b = append(b, l.bytes[from:h.start]...)
		if h.text {
			b = append(b, text...)
		} else {
			b = strconv.AppendUint(b, n, 10)
		}
		from = h.end
	}
	return append(b, l.bytes[from:]...), true
}

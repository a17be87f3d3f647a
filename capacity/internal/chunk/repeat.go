package chunk

import (
	"bytes"

	"github.com/anvilbench/anvil/capacity/internal/jsonpick"
)

// A stream's chunks repeat one another: every content chunk of a vLLM,
// SGLang, llama.cpp or ollama stream is the same bytes but for the text of
// its one delta (content, or reasoning_content or reasoning while a model
// thinks). So after a payload decoded in full whose only choice has such
// a text, a string without escapes, the Decoder keeps that payload's
// shape: the bytes before the text (up to its opening quote), the bytes
// after it (from its closing quote), and the decoded chunk, each of its
// other texts as a place in those bytes. A next payload that begins and
// ends with the same bytes, and whose text between them holds no quote,
// backslash or control character (so is a JSON string without escapes,
// as the one it replaces), is the same sequence of JSON tokens but for
// that one string: its decoding is the kept chunk with that text, which
// Decode returns without scanning the rest. A payload of any other shape
// is decoded in full, and becomes the kept shape when it qualifies.

// A shape is the kept form of the last qualifying payload.
type shape struct {
	ok     bool
	varies varying // which text the payloads of the shape differ in
	bytes  []byte  // the payload's bytes, that text left out
	prefix int     // bytes[:prefix] precedes the text; bytes[prefix:] follows it
	chunk  Chunk   // Choices nil; its texts' Bytes nil, set from places
	choice Choice  // likewise
	places [nPlaces]place
	set    [nPlaces]uint8 // the places that are set, the first nset of them
	nset   int
	// plain: the chunk is a plain content delta (RepeatedContent): its
	// content varies, and it has no reasoning, no non-empty finish
	// reason, no usage, no timings and is no error object; and its bytes
	// hold no line end.
	plain bool
}

// varying names the text a shape's payloads differ in.
type varying uint8

const (
	variesContent          varying = iota // delta.content
	variesReasoningContent                // delta.reasoning_content
	variesReasoning                       // delta.reasoning
)

// The texts of a shape that are kept as places.
const (
	placeContent = iota // when the reasoning varies
	placeRole
	placeFinish
	placeObject
	placeMessage
	placeTimings
	nPlaces
)

// A place is where a text of the kept chunk lies in a payload of the
// shape: at off from its start (suffix false) or from the start of the
// bytes that follow the varying text (suffix true); set false when the
// text is nil.
type place struct {
	set    bool
	suffix bool
	off, n int
}

// rawString is the contents of a string value of the payload, as offsets:
// a reasoning member's, whose text the decoder does not keep.
type rawString struct {
	set        bool
	start, end int
}

// remember keeps the shape of data, whose decoding is d.chunk, when it
// qualifies: one choice with a non-empty content string without escapes,
// or else a non-empty reasoning_content or reasoning string without
// escapes; no unescaped text anywhere (every text is then a piece of
// data); no error member.
func (d *Decoder) remember(data []byte) {
	s := &d.shape
	s.ok = false
	c := &d.chunk
	if len(c.Choices) != 1 || c.Error != nil || len(d.spans) != 0 {
		return
	}
	ch := &c.Choices[0]
	var start, end int
	switch r := d.reasoning; {
	case ch.Content.Kind == String && len(ch.Content.Bytes) > 0:
		off, ok := jsonpick.OffsetIn(data, ch.Content.Bytes)
		if !ok {
			return
		}
		s.varies, start, end = variesContent, off, off+len(ch.Content.Bytes)
	case r[0].set && r[0].end > r[0].start && plainText(data[r[0].start:r[0].end]):
		s.varies, start, end = variesReasoningContent, r[0].start, r[0].end
	case r[1].set && r[1].end > r[1].start && plainText(data[r[1].start:r[1].end]):
		s.varies, start, end = variesReasoning, r[1].start, r[1].end
	default:
		return
	}
	texts := [nPlaces][]byte{placeRole: ch.Role.Bytes, placeFinish: ch.FinishReason.Bytes,
		placeObject: c.Object.Bytes, placeMessage: c.Message.Bytes, placeTimings: c.Timings}
	if s.varies != variesContent {
		texts[placeContent] = ch.Content.Bytes
	}
	for k, t := range texts {
		p := place{set: t != nil, n: len(t)}
		if len(t) > 0 { // an empty text's pointer need not be in data
			off, ok := jsonpick.OffsetIn(data, t)
			switch {
			case !ok:
				return
			case off+len(t) <= start:
				p.off = off
			case off >= end:
				p.suffix, p.off = true, off-end
			default:
				return // overlaps the varying text (cannot happen: it is another token)
			}
		}
		s.places[k] = p
	}
	s.nset = 0
	for k, p := range s.places {
		if p.set {
			s.set[s.nset] = uint8(k)
			s.nset++
		}
	}
	s.bytes = append(append(s.bytes[:0], data[:start]...), data[end:]...)
	s.prefix = start
	s.chunk = *c
	s.chunk.Choices, s.chunk.Object.Bytes, s.chunk.Message.Bytes, s.chunk.Timings = nil, nil, nil, nil
	s.choice = *ch
	s.choice.Content.Bytes, s.choice.Role.Bytes, s.choice.FinishReason.Bytes = nil, nil, nil
	s.ok = true
	s.plain = s.varies == variesContent && !ch.HasReasoning() && !ch.FinishReason.NonEmpty() &&
		!c.Usage.Present && c.Timings == nil && !c.IsErrorObject() &&
		bytes.IndexByte(s.bytes, '\n') < 0 && bytes.IndexByte(s.bytes, '\r') < 0
	d.repeated = false // d.chunk is this payload's, not yet the shape's form
}

// repeat decodes data when it has the kept shape (see above), and reports
// whether it did.
func (d *Decoder) repeat(data []byte) bool {
	s := &d.shape
	if !s.ok || len(data) < len(s.bytes) {
		return false
	}
	suffix := s.bytes[s.prefix:]
	end := len(data) - len(suffix)
	text := data[s.prefix:end:end]
	if !bytes.Equal(data[:s.prefix], s.bytes[:s.prefix]) || !bytes.Equal(data[end:], suffix) || !plainText(text) {
		return false
	}
	if !d.repeated {
		// The chunk takes the shape's form once; a following repeat
		// changes only its texts.
		d.reset()
		d.choices = append(d.choices, s.choice)
		d.chunk = s.chunk
		d.chunk.Choices = d.choices
		d.repeated = true
	}
	ch := &d.choices[0]
	switch s.varies {
	case variesContent:
		ch.Content.Bytes = text
	case variesReasoningContent:
		ch.ReasoningContent = len(text) > 0
	case variesReasoning:
		ch.Reasoning = len(text) > 0
	}
	for _, k := range s.set[:s.nset] {
		p := s.places[k]
		var t []byte
		if p.n == 0 {
			t = data[:0:0]
		} else {
			off := p.off
			if p.suffix {
				off += end
			}
			t = data[off : off+p.n : off+p.n]
		}
		switch k {
		case placeContent:
			ch.Content.Bytes = t
		case placeRole:
			ch.Role.Bytes = t
		case placeFinish:
			ch.FinishReason.Bytes = t
		case placeObject:
			d.chunk.Object.Bytes = t
		case placeMessage:
			d.chunk.Message.Bytes = t
		case placeTimings:
			d.chunk.Timings = t
		}
	}
	return true
}

// RepeatedContent is the fast path of a stream of content deltas: when b
// begins with a payload that repeats the kept shape (see above) and that
// shape's chunk is a plain content delta (one choice, whose content is
// the text that varies; no reasoning, no non-empty finish reason, no
// usage, no timings, no error object), it returns the payload's length
// n and its content text, found in the one pass that also finds where
// the payload ends. Decode of b[:n] would return the kept chunk with that
// content. The bytes of b after the payload are not looked at; the
// decoder's chunk is left as it was (the next Decode is unchanged by the
// call). text is a piece of b.
func (d *Decoder) RepeatedContent(b []byte) (n int, text []byte, ok bool) {
	s := &d.shape
	if !s.ok || !s.plain || len(b) < len(s.bytes) || string(b[:s.prefix]) != string(s.bytes[:s.prefix]) {
		return 0, nil, false
	}
	// The text ends at the first byte a string without escapes cannot
	// hold, which must be the suffix's opening quote.
	i := s.prefix
	for i < len(b) && b[i] != '"' && b[i] != '\\' && b[i] >= 0x20 {
		i++
	}
	suffix := s.bytes[s.prefix:]
	if len(b)-i < len(suffix) || string(b[i:i+len(suffix)]) != string(suffix) {
		return 0, nil, false
	}
	d.repeats++
	return i + len(suffix), b[s.prefix:i:i], true
}

// plainText reports whether b can be the contents of a JSON string without
// escapes: no quote, no backslash, no control character.
func plainText(b []byte) bool {
	for _, c := range b {
		if c == '"' || c == '\\' || c < 0x20 {
			return false
		}
	}
	return true
}

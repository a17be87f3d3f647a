package chunk

import (
	"bytes"

	"github.com/anvilbench/anvil/capacity/internal/jsonpick"
)

// A Decoder decodes the payloads of one stream, one after the other. Its
// storage (the choices, the buffer of unescaped text) is kept from one call
// to the next, so that a stream allocates only while its chunks grow. The
// zero value is ready to use. A Decoder is not safe for concurrent use.
type Decoder struct {
	chunk   Chunk
	choices []Choice
	// buf holds the unescaped strings of the current payload; spans says
	// which Text each belongs to, set once the payload is decoded (buf may
	// move while it grows).
	buf   []byte
	spans []span
	stack jsonpick.SkipStack
	// fallbacks counts the payloads handed to encoding/json.
	fallbacks int
	// shape is the last payload's shape, for the next payload that
	// repeats it (repeat.go).
	shape shape
	// repeats counts the payloads decoded as repeats of the kept shape;
	// repeated says the chunk is in the shape's form (the last payload
	// was one), so that the next repeat only changes its texts.
	repeats  int
	repeated bool
	// reasoning holds where the first choice's reasoning_content and
	// reasoning strings are in the payload, for its shape.
	reasoning [2]rawString
}

// span is the place in Decoder.buf of the unescaped text of one field.
type span struct {
	choice   int
	field    int
	off, end int
}

// Decode decodes one payload. It returns ErrNotObject, ErrTrailingData or
// a *MalformedError when the payload is not exactly one JSON object that
// encoding/json decodes; the decoder may be used again after an error. The
// chunk and its byte slices are valid until the next call (see the package
// documentation).
func (d *Decoder) Decode(data []byte) (*Chunk, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return nil, ErrNotObject
	}
	if d.repeat(data) {
		d.repeats++
		return &d.chunk, nil
	}
	d.reset()
	end := d.object(data, 0, levelTop, 0)
	if end < 0 {
		d.shape.ok = false
		d.fallbacks++
		d.reset()
		return d.fallback(data)
	}
	if end != len(data) {
		d.shape.ok = false
		return nil, ErrTrailingData
	}
	d.finish()
	d.remember(data)
	return &d.chunk, nil
}

// reset forgets the previous payload, keeping the storage. The choices are
// cleared so that they hold no reference to the previous payload.
func (d *Decoder) reset() {
	d.repeated = false
	d.reasoning = [2]rawString{}
	clear(d.choices)
	d.choices = d.choices[:0]
	d.buf = d.buf[:0]
	d.spans = d.spans[:0]
	d.chunk = Chunk{}
}

// finish points the unescaped texts at their place in buf and publishes
// the choices.
func (d *Decoder) finish() {
	for _, s := range d.spans {
		d.textField(s.choice, s.field).Bytes = d.buf[s.off:s.end:s.end]
	}
	d.chunk.Choices = d.choices
}

// object decodes the object starting at b[i] == '{' whose members are
// those of lv; ci is the index of the choice a choice or delta object
// belongs to.
func (d *Decoder) object(b []byte, i int, lv level, ci int) int {
	i = jsonpick.SkipSpace(b, i+1)
	if i >= len(b) {
		return jsonpick.Fail
	}
	if b[i] == '}' {
		return i + 1
	}
	seen := 0
	for {
		// A member name (only an ASCII one without escapes is decoded
		// here: encoding/json alone decides which member another selects),
		// its colon and the start of its value at v.
		if i >= len(b) || b[i] != '"' {
			return jsonpick.Fail
		}
		j, upper := jsonpick.NameEnd(b, i+1)
		if j >= len(b) || b[j] != '"' {
			return jsonpick.Fail
		}
		name := b[i+1 : j]
		v := jsonpick.SkipSpace(b, j+1)
		if v >= len(b) || b[v] != ':' {
			return jsonpick.Fail
		}
		if v = jsonpick.SkipSpace(b, v+1); v >= len(b) {
			return jsonpick.Fail
		}
		var f int
		if upper {
			f = lookupFolded(lv, name)
		} else {
			f = lookup(lv, name)
		}
		if f < 0 || seen&f != 0 {
			return jsonpick.Fail
		}
		seen |= f
		switch {
		case f != 0:
			i = d.value(b, v, f, ci)
		case b[v] == '"': // most members not decoded are strings
			i, _ = jsonpick.StringEnd(b, v)
		case b[v] == 'n':
			i = jsonpick.LiteralEnd(b, v)
		case jsonpick.IsDigit(b[v]):
			i = jsonpick.NumberEnd(b, v)
		default:
			i = jsonpick.ValueEnd(b, v, &d.stack)
		}
		if i < 0 {
			return jsonpick.Fail
		}
		i = jsonpick.SkipSpace(b, i)
		if i >= len(b) {
			return jsonpick.Fail
		}
		switch b[i] {
		case ',':
			i = jsonpick.SkipSpace(b, i+1)
			continue
		case '}':
			return i + 1
		}
		return jsonpick.Fail
	}
}

// value decodes the value of member f starting at b[i] and returns the
// index after it.
func (d *Decoder) value(b []byte, i int, f int, ci int) int {
	switch f {
	case fChoices:
		return d.choiceArray(b, i)
	case fUsage:
		return d.objectOrNull(b, i, levelUsage, 0)
	case fError, fTimings:
		if b[i] == 'n' {
			return jsonpick.LiteralEnd(b, i)
		}
		end := jsonpick.ValueEnd(b, i, &d.stack)
		if end >= 0 {
			if f == fError {
				d.chunk.Error = b[i:end:end]
			} else {
				d.chunk.Timings = b[i:end:end]
			}
		}
		return end
	case fObject, fMessage:
		return d.text(b, i, noChoice, f)
	case fDelta:
		return d.objectOrNull(b, i, levelDelta, ci)
	case fDetails:
		return d.objectOrNull(b, i, levelDetails, 0)
	case fFinish, fContent, fRole:
		return d.text(b, i, ci, f)
	case fReasoningContent, fReasoning:
		end := jsonpick.ValueEnd(b, i, &d.stack)
		if ci == 0 && end >= 0 {
			k := 0
			if f == fReasoning {
				k = 1
			}
			d.reasoning[k] = rawString{set: b[i] == '"', start: i + 1, end: end - 1}
		}
		if end-i > 2 && b[i] == '"' {
			if ch := &d.choices[ci]; f == fReasoning {
				ch.Reasoning = true
			} else {
				ch.ReasoningContent = true
			}
		}
		return end
	case fPrompt, fCompletion, fTotal, fCached:
		end := jsonpick.ValueEnd(b, i, &d.stack)
		if end >= 0 {
			*d.intField(f), d.buf = jsonpick.ParseInt(b[i:end], d.buf)
		}
		return end
	}
	return jsonpick.ValueEnd(b, i, &d.stack)
}

// objectOrNull decodes a member that encoding/json decodes into a struct
// (or a pointer to one): an object or null, and a type error otherwise.
func (d *Decoder) objectOrNull(b []byte, i int, lv level, ci int) int {
	switch b[i] {
	case '{':
		if lv == levelUsage {
			d.chunk.Usage.Present = true
		}
		return d.object(b, i, lv, ci)
	case 'n':
		return jsonpick.LiteralEnd(b, i)
	}
	return jsonpick.Fail
}

// choiceArray decodes the value of choices: null or an array of objects
// and nulls (a null element is a choice with nothing set).
func (d *Decoder) choiceArray(b []byte, i int) int {
	switch b[i] {
	case 'n':
		return jsonpick.LiteralEnd(b, i)
	case '[':
	default:
		return jsonpick.Fail
	}
	i = jsonpick.SkipSpace(b, i+1)
	if i >= len(b) {
		return jsonpick.Fail
	}
	if b[i] == ']' {
		return i + 1
	}
	for {
		d.choices = append(d.choices, Choice{})
		switch b[i] {
		case '{':
			i = d.object(b, i, levelChoice, len(d.choices)-1)
		case 'n':
			i = jsonpick.LiteralEnd(b, i)
		default:
			return jsonpick.Fail
		}
		if i < 0 {
			return jsonpick.Fail
		}
		i = jsonpick.SkipSpace(b, i)
		if i >= len(b) {
			return jsonpick.Fail
		}
		switch b[i] {
		case ',':
			if i = jsonpick.SkipSpace(b, i+1); i >= len(b) {
				return jsonpick.Fail
			}
			continue
		case ']':
			return i + 1
		}
		return jsonpick.Fail
	}
}

// text decodes a Text member of choice ci starting at b[i].
func (d *Decoder) text(b []byte, i int, ci int, f int) int {
	if b[i] != '"' {
		end := jsonpick.ValueEnd(b, i, &d.stack)
		d.textField(ci, f).Kind = jsonpick.KindOf(b[i])
		return end
	}
	end, escaped := jsonpick.StringEnd(b, i)
	if end < 0 {
		return jsonpick.Fail
	}
	d.setString(ci, f, b[i+1:end-1], escaped)
	return end
}

// setString sets a Text member of choice ci to the contents s of a valid
// JSON string: s itself without escapes, else its text unescaped in buf.
func (d *Decoder) setString(ci int, f int, s []byte, escaped bool) {
	t := d.textField(ci, f)
	t.Kind = String
	if !escaped {
		t.Bytes = s[:len(s):len(s)]
		return
	}
	off := len(d.buf)
	d.buf = jsonpick.AppendUnescaped(d.buf, s)
	d.spans = append(d.spans, span{choice: ci, field: f, off: off, end: len(d.buf)})
}

// noChoice is the choice index of a top-level Text member.
const noChoice = -1

func (d *Decoder) textField(ci int, f int) *Text {
	switch f {
	case fObject:
		return &d.chunk.Object
	case fMessage:
		return &d.chunk.Message
	}
	ch := &d.choices[ci]
	switch f {
	case fContent:
		return &ch.Content
	case fRole:
		return &ch.Role
	}
	return &ch.FinishReason
}

func (d *Decoder) intField(f int) *Int {
	u := &d.chunk.Usage
	switch f {
	case fPrompt:
		return &u.PromptTokens
	case fCompletion:
		return &u.CompletionTokens
	case fTotal:
		return &u.TotalTokens
	}
	return &u.CachedTokens
}

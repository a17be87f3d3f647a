package servermetrics

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"
)

// The sample lines of the text format, as scanner reads them: a name (or
// a name inside the braces), a label set, a value and a timestamp.

// readSample reads a sample line, its name first or, with braces, inside
// them, and passes a kept family's sample to sink.
func (s *scanner) readSample(sink sampleSink, braces bool) (int, part, error) {
	s.buf, s.spans = s.buf[:0], s.spans[:0]
	f, p := -1, partWhole
	if !braces {
		if err := s.readName(&s.name, false); err != nil {
			return 0, 0, err
		}
		if len(s.name) == 0 {
			return 0, 0, errors.New("invalid metric name")
		}
		if s.lastF >= 0 && bytes.Equal(s.name, s.lastName) {
			f, p = s.lastF, s.lastP
		} else {
			var err error
			if f, p, err = s.familyOf(s.name); err != nil {
				return 0, 0, err
			}
			s.lastName, s.lastF, s.lastP = append(s.lastName[:0], s.name...), f, p
		}
		if isBlank(s.cur()) {
			s.skipBlank()
		}
	}
	switch {
	case s.cur() != '{':
	case braces || s.list[f].kept:
		var err error
		if f, p, err = s.readLabels(braces, f, p); err != nil {
			return 0, 0, err
		}
	default:
		if err := s.skipLabels(); err != nil {
			return 0, 0, err
		}
	}
	fam := &s.list[f]
	fam.typed = true // a TYPE line after a sample is an error, as in expfmt
	v, err := s.readValue()
	if err != nil {
		return 0, 0, err
	}
	if !fam.kept {
		return f, p, nil
	}
	if err := s.checkLabels(fam.kind); err != nil {
		return 0, 0, err
	}
	typ := typeGauge
	switch {
	case fam.kind == kindSummary || fam.kind.histogramLike():
		if p != partSum && p != partCount {
			return f, p, nil // a bucket or a quantile: not kept
		}
		typ = typeCounter
	case fam.kind == kindCounter:
		typ = typeCounter
	}
	if sink != nil {
		s.labels = s.labels[:0]
		for _, sp := range s.spans {
			s.labels = append(s.labels, labelView{s.buf[sp[0]:sp[1]], s.buf[sp[2]:sp[3]]})
		}
		s.view = sampleView{name: s.name, family: fam.name, typ: typ, labels: s.labels, value: v}
		sink.sample(&s.view)
	}
	return f, p, nil
}

// readLabels reads a label set from its '{' to past its '}', decoding the
// labels into buf; with braces the metric name is among them, a name
// standing alone (f is then -1 until it is read). It returns the family.
func (s *scanner) readLabels(braces bool, f int, p part) (int, part, error) {
	for {
		b := s.skipBlank() // past '{' or ','
		if b == '}' {
			if f < 0 {
				return 0, 0, errors.New("invalid metric name")
			}
			s.skipBlank()
			return f, p, nil
		}
		if err := s.readName(&s.tok, true); err != nil {
			return 0, 0, err
		}
		if len(s.tok) == 0 {
			return 0, 0, errors.New("invalid label name")
		}
		if isBlank(s.cur()) {
			s.skipBlank()
		}
		if s.cur() != '=' {
			if !braces {
				return 0, 0, fmt.Errorf("expected '=' after label name, found %q", s.cur())
			}
			if f >= 0 {
				return 0, 0, errors.New("multiple metric names")
			}
			if c := s.cur(); c != ',' && c != '}' {
				return 0, 0, fmt.Errorf("unexpected end of metric name %q", c)
			}
			s.name = append(s.name[:0], s.tok...)
			var err error
			if f, p, err = s.familyOf(s.name); err != nil {
				return 0, 0, err
			}
			if s.cur() == '}' {
				s.skipBlank()
				return f, p, nil
			}
			continue
		}
		if err := s.readLabelValue(); err != nil {
			return 0, 0, err
		}
		switch s.skipBlank() {
		case ',':
		case '}':
			if f < 0 {
				return 0, 0, errors.New("invalid metric name")
			}
			s.skipBlank()
			return f, p, nil
		default:
			return 0, 0, fmt.Errorf("unexpected end of label value %q", s.buf[s.spans[len(s.spans)-1][2]:])
		}
	}
}

// readLabelValue reads '=' and the quoted value after a label name (in
// tok), appending both to buf as a span; the name must be valid and not
// __name__ (checkLabels finds a name given twice).
func (s *scanner) readLabelValue() error {
	name := s.tok
	if string(name) == "__name__" {
		return errors.New(`label name "__name__" is reserved`)
	}
	if !utf8.Valid(name) {
		return fmt.Errorf("invalid label name %q", name)
	}
	if s.skipBlank() != '"' {
		return fmt.Errorf("expected '\"' at start of label value, found %q", s.cur())
	}
	sp := [4]int{len(s.buf), 0, 0, 0}
	s.buf = append(s.buf, name...)
	sp[1], sp[2] = len(s.buf), len(s.buf)
	for escaped := false; ; {
		b := s.next()
		switch {
		case escaped:
			d, err := unescape(b)
			if err != nil {
				return err
			}
			s.buf = append(s.buf, d)
			escaped = false
			continue
		case b == '"':
		case b == '\n':
			return fmt.Errorf("label value %q contains unescaped new-line", s.buf[sp[2]:])
		case b == '\\':
			escaped = true
			continue
		default:
			s.buf = append(s.buf, b)
			continue
		}
		break
	}
	sp[3] = len(s.buf)
	if !utf8.Valid(s.buf[sp[2]:sp[3]]) {
		return fmt.Errorf("invalid label value %q", s.buf[sp[2]:sp[3]])
	}
	s.spans = append(s.spans, sp)
	return nil
}

// skipLabels moves past a label set, from its '{' to past its '}' and the
// blanks after it, without decoding it: the labels of a family not kept.
// It looks for the quotes and the brace with bytes.IndexByte.
func (s *scanner) skipLabels() error {
	for rest := s.line[s.i+1:]; ; {
		q, c := bytes.IndexByte(rest, '"'), bytes.IndexByte(rest, '}')
		switch {
		case c < 0:
			return errors.New("unexpected end of label set")
		case q < 0 || c < q:
			s.i = len(s.line) - len(rest) + c
			s.skipBlank()
			return nil
		}
		rest = rest[q+1:]
		for { // to the closing quote: one not escaped by an odd run of backslashes
			e := bytes.IndexByte(rest, '"')
			if e < 0 {
				return errors.New("unexpected end of label set")
			}
			n := 0
			for n < e && rest[e-1-n] == '\\' {
				n++
			}
			rest = rest[e+1:]
			if n%2 == 0 {
				break
			}
		}
	}
}

// checkLabels removes a summary's quantile label and a histogram's le
// label, which say which quantile or bucket a line is, not which series
// (their values must be numbers), and sorts the others by name, none
// given twice: in O(n log n), whatever a line's labels.
func (s *scanner) checkLabels(k familyKind) error {
	if err := s.dropSpecial(k); err != nil {
		return err
	}
	name := func(sp [4]int) []byte { return s.buf[sp[0]:sp[1]] }
	slices.SortFunc(s.spans, func(a, b [4]int) int { return bytes.Compare(name(a), name(b)) })
	for i := 1; i < len(s.spans); i++ {
		if bytes.Equal(name(s.spans[i-1]), name(s.spans[i])) {
			return errors.New("duplicate label names")
		}
	}
	return nil
}

// dropSpecial removes a summary's quantile and a histogram's le label.
func (s *scanner) dropSpecial(k familyKind) error {
	special := ""
	switch {
	case k == kindSummary:
		special = "quantile"
	case k.histogramLike():
		special = "le"
	default:
		return nil
	}
	kept := s.spans[:0]
	for _, sp := range s.spans {
		if string(s.buf[sp[0]:sp[1]]) != special {
			kept = append(kept, sp)
			continue
		}
		if _, err := parseValue(s.buf[sp[2]:sp[3]]); err != nil {
			return fmt.Errorf("expected float as value for %q label, got %q", special, s.buf[sp[2]:sp[3]])
		}
	}
	s.spans = kept
	return nil
}

// readValue reads the sample's value and its optional timestamp, to the
// line's end.
func (s *scanner) readValue() (float64, error) {
	start := s.i
	for s.i < len(s.line) && !isBlank(s.line[s.i]) {
		s.i++
	}
	tok := s.line[start:s.i]
	v, err := parseValue(tok)
	if err != nil {
		return 0, fmt.Errorf("expected float as value, got %q", tok)
	}
	if s.cur() == '\n' || s.skipBlank() == '\n' {
		return v, nil
	}
	start = s.i
	for b := s.cur(); !isBlank(b) && b != '\n'; b = s.next() {
	}
	if _, err := strconv.ParseInt(string(s.line[start:s.i]), 10, 64); err != nil {
		return 0, fmt.Errorf("expected integer as timestamp, got %q", s.line[start:s.i])
	}
	if isBlank(s.cur()) {
		s.skipBlank()
	}
	if s.cur() != '\n' {
		return 0, fmt.Errorf("spurious string after timestamp: %q", s.line[s.i:])
	}
	return v, nil
}

// parseValue parses a sample value as expfmt does: a Go float, without
// hex mantissas' p exponents or underscores.
func parseValue(b []byte) (float64, error) {
	for _, c := range b {
		if c == 'p' || c == 'P' || c == '_' {
			return 0, errors.New("unsupported character in float")
		}
	}
	return strconv.ParseFloat(string(b), 64)
}

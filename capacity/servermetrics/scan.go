package servermetrics

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"strings"
	"unicode/utf8"
)

// maxLineBytes bounds one line of a body; a longer one is an error.
const maxLineBytes = 1 << 20

// familyKind is a metric family's type, as its TYPE line declares it
// (untyped when none does).
type familyKind uint8

const (
	kindUntyped familyKind = iota
	kindCounter
	kindGauge
	kindHistogram
	kindGaugeHistogram
	kindSummary
)

// kinds maps a TYPE line's type, upper-cased (the format tolerates any
// case, and OpenMetrics' "gaugehistogram"), to its kind.
var kinds = map[string]familyKind{
	"UNTYPED": kindUntyped, "COUNTER": kindCounter, "GAUGE": kindGauge, "HISTOGRAM": kindHistogram,
	"GAUGE_HISTOGRAM": kindGaugeHistogram, "GAUGEHISTOGRAM": kindGaugeHistogram, "SUMMARY": kindSummary,
}

func (k familyKind) histogramLike() bool { return k == kindHistogram || k == kindGaugeHistogram }

// part is which sample of its family a sample line holds.
type part uint8

const (
	partWhole  part = iota // the family's own name: its value, or a summary's quantile
	partSum                // name_sum of a histogram or summary
	partCount              // name_count of a histogram or summary
	partBucket             // name_bucket of a histogram
)

// suffixes are the sample-name suffixes of the parts.
var suffixes = [...]string{partWhole: "", partSum: "_sum", partCount: "_count", partBucket: "_bucket"}

// family is what a scan knows of one family of the body.
type family struct {
	kind    familyKind
	typed   bool   // a TYPE line declared kind
	counted bool   // it had a sample: counted in scrapeResult.Families
	kept    bool   // the selection keeps it
	name    string // set for kept families only
}

// labelView is one label of a sample line, decoded.
type labelView struct{ name, value []byte }

// sampleView is one kept sample. It is valid during the sink's call only:
// its bytes are the scanner's, reused by the next line.
type sampleView struct {
	name   []byte // the sample name: the family's, or its _sum or _count
	family string
	typ    string // typeGauge or typeCounter
	labels []labelView
	value  float64
}

// sampleSink receives the kept samples of one body, in the body's order.
type sampleSink interface{ sample(v *sampleView) }

// scanner reads bodies in the Prometheus text format (version 0.0.4, as
// vLLM, SGLang, llama.cpp and TGI serve it) a line at a time, keeping
// only the samples of selected families: a line of any other family costs
// reading its name and skipping to its value, never a label map, a key or
// an allocation, whatever the body's size.
//
// It reads the grammar github.com/prometheus/common/expfmt reads, and any
// body that parser accepts it reads to the same kept samples
// (FuzzScanAgreesWithExpfmt): names legacy or quoted, labels with the
// escapes \\, \" and \n, values as Go floats without hex or underscores,
// an optional integer timestamp; a family's samples found through its
// TYPE line (a histogram's _bucket, _sum and _count, a summary's
// quantiles, _sum and _count). It is laxer where that loses nothing: a
// last line without its newline and blanks ending a line are accepted,
// and the labels of a family it does not keep are skipped unchecked.
//
// A scanner keeps its buffers and family table from body to body; it is
// not safe for concurrent use.
type scanner struct {
	sel  selection
	seed maphash.Seed
	fams map[uint64]int // family name's hash -> index in list
	list []family

	line []byte // the line being read
	i    int    // the current byte's index in line; len(line) is its newline

	name []byte // the line's metric name, decoded
	// The previous sample line's name and what familyOf made of it: a
	// name's family never changes within a body, and a family's lines
	// come together.
	lastName []byte
	lastF    int
	lastP    part

	tok    []byte      // a label name or value being decoded
	buf    []byte      // the line's decoded labels
	spans  [][4]int    // their name and value spans in buf
	labels []labelView // views of spans, for the sink
	view   sampleView
}

// newScanner returns a scanner keeping the families sel keeps.
func newScanner(sel selection) *scanner {
	return &scanner{sel: sel, seed: maphash.MakeSeed(), fams: map[uint64]int{}}
}

// errFormat wraps every error of a body that is not the text format.
var errFormat = errors.New("servermetrics: the body is not the Prometheus text format")

// scan reads one body, passing every kept sample (a selected family's,
// except a histogram's buckets and a summary's quantiles) to sink, which
// may be nil. The error names the first line that is not the text
// format; sink has had the samples of the lines before it.
func (s *scanner) scan(r io.Reader, sink sampleSink) (scrapeResult, error) {
	clear(s.fams)
	s.list, s.lastF = s.list[:0], -1
	var sc scrapeResult
	perEngine := make([]int, len(engines))
	lines := bufio.NewScanner(r)
	lines.Buffer(make([]byte, 0, 64<<10), maxLineBytes)
	n := 0
	for lines.Scan() {
		n++
		s.line, s.i = lines.Bytes(), -1
		f, p, err := s.readLine(sink)
		if err != nil {
			return scrapeResult{}, fmt.Errorf("%w: line %d: %w", errFormat, n, err)
		}
		if f < 0 || s.list[f].counted {
			continue
		}
		fam := &s.list[f]
		fam.counted = true
		name := s.name[:len(s.name)-len(suffixes[p])]
		if bytes.HasSuffix(name, []byte(createdSuffix)) {
			continue // a family's creation time, not a metric
		}
		sc.Families++
		if e := engineIndex(name); e >= 0 {
			perEngine[e]++
		}
		if fam.kept {
			sc.Kept = append(sc.Kept, fam.name)
		}
	}
	if err := lines.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return scrapeResult{}, fmt.Errorf("%w: line %d: over %d bytes", errFormat, n+1, maxLineBytes)
		}
		return scrapeResult{}, fmt.Errorf("servermetrics: reading the body: %w", err)
	}
	best := 0
	for i, e := range engines { // in order, so a tie goes to the first
		if perEngine[i] > best {
			sc.Engine, best = e.engine, perEngine[i]
		}
	}
	return sc, nil
}

// The byte reader, as expfmt's: cur is the current byte (a newline past
// the line's end), next moves to the following one.
func (s *scanner) cur() byte {
	if s.i < len(s.line) {
		return s.line[s.i]
	}
	return '\n'
}

func (s *scanner) next() byte {
	if s.i < len(s.line) {
		s.i++
	}
	return s.cur()
}

// skipBlank moves past the current byte and any blanks and tabs after it.
func (s *scanner) skipBlank() byte {
	for {
		if b := s.next(); b != ' ' && b != '\t' {
			return b
		}
	}
}

func isBlank(b byte) bool { return b == ' ' || b == '\t' }

// readLine reads one line: a comment, a blank line or a sample. It
// returns the index of the family of a sample line and its part, or -1.
func (s *scanner) readLine(sink sampleSink) (int, part, error) {
	switch s.skipBlank() {
	case '\n':
		return -1, 0, nil
	case '#':
		return -1, 0, s.readComment()
	case '{':
		return s.readSample(sink, true)
	}
	return s.readSample(sink, false)
}

// readComment reads a comment line: a HELP or TYPE line declares its
// family (a TYPE line its kind); any other comment is ignored.
func (s *scanner) readComment() error {
	if s.skipBlank() == '\n' {
		return nil
	}
	start := s.i
	for b := s.cur(); !isBlank(b) && b != '\n'; b = s.next() {
	}
	keyword := string(s.line[start:s.i]) // no allocation: compared only
	if keyword != "HELP" && keyword != "TYPE" || s.cur() == '\n' {
		return nil
	}
	s.skipBlank()
	if err := s.readName(&s.name, false); err != nil {
		return err
	}
	if s.cur() == '\n' {
		return nil
	}
	if !isBlank(s.cur()) {
		return errors.New("invalid metric name in comment")
	}
	f, _, err := s.familyOf(s.name)
	if err != nil {
		return err
	}
	if s.skipBlank() == '\n' || keyword == "HELP" {
		return nil
	}
	if s.list[f].typed {
		return fmt.Errorf("second TYPE line for metric name %q, or TYPE reported after samples", s.name)
	}
	typ := strings.TrimRight(string(s.line[s.i:]), " \t") // the line's rest; the format keeps no blank
	k, ok := kinds[strings.ToUpper(typ)]
	if !ok {
		return fmt.Errorf("unknown metric type %q", typ)
	}
	s.list[f].kind, s.list[f].typed = k, true
	return nil
}

// familyOf returns the family of a sample or comment named name, as
// expfmt finds it: the family of that name; else, for a name ending in
// _sum or _count, the summary it belongs to; else, for one ending in
// _bucket, _sum or _count, the histogram; else a new untyped family.
func (s *scanner) familyOf(name []byte) (int, part, error) {
	if len(name) == 0 || !utf8.Valid(name) {
		return 0, 0, fmt.Errorf("invalid metric name %q", name)
	}
	if f, ok := s.fams[maphash.Bytes(s.seed, name)]; ok {
		return f, partWhole, nil
	}
	for _, p := range []part{partSum, partCount, partBucket} {
		base, ok := bytes.CutSuffix(name, []byte(suffixes[p]))
		if !ok {
			continue
		}
		if f, ok := s.fams[maphash.Bytes(s.seed, base)]; ok {
			k := s.list[f].kind
			if k.histogramLike() || k == kindSummary && p != partBucket {
				return f, p, nil
			}
		}
	}
	f := len(s.list)
	s.fams[maphash.Bytes(s.seed, name)] = f
	s.list = append(s.list, family{})
	if fam := &s.list[f]; s.sel.keepsBytes(name) {
		fam.kept, fam.name = true, string(name)
	}
	return f, partWhole, nil
}

// readName decodes a metric or label name starting at the current byte
// into *dst, legacy ([a-zA-Z_:][a-zA-Z0-9_:]*; no colon in a label name)
// or quoted ("any UTF-8", with \\, \" and \n), stopping at the first byte
// that is not part of it, as expfmt's token reader does.
func (s *scanner) readName(dst *[]byte, label bool) error {
	*dst = (*dst)[:0]
	if !isNameStart(s.cur(), label) {
		return nil
	}
	// A legacy name, the common case, is copied at once.
	j := s.i
	for j < len(s.line) && isNameByte(s.line[j], label) && s.line[j] != '"' {
		j++
	}
	if j == len(s.line) || s.line[j] != '"' && s.line[j] != '\\' {
		*dst = append(*dst, s.line[s.i:j]...)
		s.i = j
		return nil
	}
	quoted, escaped := false, false
	for b := s.cur(); ; {
		switch {
		case escaped:
			d, err := unescape(b)
			if err != nil {
				return err
			}
			*dst = append(*dst, d)
			escaped = false
		case b == '"':
			quoted = !quoted
			if !quoted {
				s.next()
				return nil
			}
		case b == '\n':
			return fmt.Errorf("name %q contains unescaped new-line", *dst)
		case b == '\\':
			escaped = true
		default:
			*dst = append(*dst, b)
		}
		b = s.next()
		if !quoted && !isNameByte(b, label) {
			return nil
		}
	}
}

func isNameStart(b byte, label bool) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || b == '_' || b == '"' || !label && b == ':'
}

func isNameByte(b byte, label bool) bool { return isNameStart(b, label) || '0' <= b && b <= '9' }

// unescape returns the byte an escape sequence \b stands for.
func unescape(b byte) (byte, error) {
	switch b {
	case '\\', '"':
		return b, nil
	case 'n':
		return '\n', nil
	}
	return 0, fmt.Errorf("invalid escape sequence '\\%c'", b)
}

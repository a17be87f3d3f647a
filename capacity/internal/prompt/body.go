package prompt

import (
	"bytes"
	"fmt"
	"io"
	"strconv"

	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/jsonstr"
)

// A request body is head + the JSON-quoted prompt + tail (client.Encoder).
// Most of a long prompt is bytes every request shares (the shared prefix,
// or in unique mode the filler of the request-specific prefix) and filler
// lines that follow a formula. So a body is not built into a buffer per
// request: it is streamed from the run's shared pieces (JSON-escaped once,
// in New), the request's own few bytes (the unique-mode header, the
// calibration line, the closing instruction) and the request's filler
// lines, generated as the transport reads them. A request in flight holds
// a few hundred bytes whatever its prompt's size; the bytes sent are
// exactly client.Encoder.AppendBody of the prompt Append builds
// (TestStreamedBodyBytes compares them over many layouts).

// sharedPieces are the prompt bytes of a run that every request shares:
// lines(0, Config.PrefixChars) of capacity/PROTOCOL.md#prompts,
// which is the whole shared prefix in shared mode and, cut to each
// request's room, the filler of the request-specific prefix in unique mode.
type sharedPieces struct {
	raw     []byte // the lines as characters
	escaped []byte // the same lines JSON-escaped (no quotes)
}

// newSharedPieces builds the shared lines of chars characters. The lines
// hold ASCII letters, digits, punctuation, spaces and "\n", of which JSON
// escapes only "\n" (as two bytes), so the escaped form of raw[:k] is
// escaped[:k + the newlines in raw[:k]]; the constructor checks that.
func newSharedPieces(chars int) (*sharedPieces, error) {
	raw := AppendLines(nil, 0, max(chars, 0))
	esc := jsonstr.Append(make([]byte, 0, len(raw)+len(raw)/16+2), raw, jsonstr.Go)
	esc = esc[1 : len(esc)-1]
	if len(esc) != len(raw)+bytes.Count(raw, []byte{'\n'}) {
		return nil, fmt.Errorf("capacity: prompt lines escape to %d bytes, want %d: a prompt piece needs more escaping than its line ends", len(esc), len(raw)+bytes.Count(raw, []byte{'\n'}))
	}
	return &sharedPieces{raw: raw, escaped: esc}, nil
}

// escapedPrefix is the JSON-escaped form of the first k characters.
func (s *sharedPieces) escapedPrefix(k int) []byte {
	return s.escaped[:k+bytes.Count(s.raw[:k], []byte{'\n'})]
}

// Filler lines escaped: line k of lines(offset, n) is
// escLineStart + (offset+k) + escLineMiddle + k + escLineEnd.
var (
	escLineStart  = escapeJSON(lineStart)
	escLineMiddle = escapeJSON(lineMiddle)
	escLineEnd    = escapeJSON(lineEnd)
)

// escapeJSON is s JSON-escaped as request bodies escape it, without quotes.
func escapeJSON[S ~string | ~[]byte](s S) []byte {
	q := jsonstr.Append(nil, s, jsonstr.Go)
	return q[1 : len(q)-1]
}

// appendEscaped appends s JSON-escaped without quotes to dst.
func appendEscaped(dst, s []byte) []byte {
	start := len(dst)
	dst = jsonstr.Append(dst, s, jsonstr.Go)
	dst = append(dst[:start], dst[start+1:len(dst)-1]...)
	return dst
}

// filler is lines(offset, n) of capacity/PROTOCOL.md#prompts, JSON-escaped.
type filler struct {
	offset, n int
}

// size returns the length of the escaped filler, line by line without
// writing it (the last line, cut, is escaped in a small buffer).
func (f filler) size() int64 {
	var total int64
	left := f.n
	for k := 0; left > 0; k++ {
		raw := len(lineStart) + digits(f.offset+k) + len(lineMiddle) + digits(k) + len(lineEnd)
		if raw > left {
			var buf [2 * maxFillerLine]byte
			total += int64(len(f.lastLine(buf[:0], k, left)))
			break
		}
		total += int64(len(escLineStart) + digits(f.offset+k) + len(escLineMiddle) + digits(k) + len(escLineEnd))
		left -= raw
	}
	return total
}

// maxFillerLine bounds the characters of one filler line: the three
// pieces and two int64 numbers.
const maxFillerLine = len(lineStart) + len(lineMiddle) + len(lineEnd) + 2*20

// appendLine appends escaped line k to dst.
func (f filler) appendLine(dst []byte, k int) []byte {
	dst = append(dst, escLineStart...)
	dst = strconv.AppendInt(dst, int64(f.offset+k), 10)
	dst = append(dst, escLineMiddle...)
	dst = strconv.AppendInt(dst, int64(k), 10)
	return append(dst, escLineEnd...)
}

// lastLine appends line k cut to chars characters, escaped, to dst.
func (f filler) lastLine(dst []byte, k, chars int) []byte {
	var raw [maxFillerLine]byte
	line := append(raw[:0], lineStart...)
	line = strconv.AppendInt(line, int64(f.offset+k), 10)
	line = append(line, lineMiddle...)
	line = strconv.AppendInt(line, int64(k), 10)
	line = append(line, lineEnd...)
	return appendEscaped(dst, line[:chars])
}

// digits is the number of decimal digits of n >= 0.
func digits(n int) int {
	d := 1
	for n >= 10 {
		n /= 10
		d++
	}
	return d
}

// A Body is the streamed body of one request, a client.Body:
// parts[:fillAt], the filler, parts[fillAt:]. It is immutable once built,
// so any number of readers
// (the first attempt, a retry, the transport's GetBody) read it at once.
type Body struct {
	parts  [bodyParts][]byte
	nparts int
	fillAt int
	fill   filler
	length int64
}

// bodyParts bounds the byte parts of a streamed body.
const bodyParts = 8

// add appends a byte part.
func (b *Body) add(p []byte) {
	if len(p) == 0 {
		return
	}
	b.parts[b.nparts] = p
	b.nparts++
	b.length += int64(len(p))
}

// ContentLength implements client.Body.
func (b *Body) ContentLength() int64 { return b.length }

// NewReader implements client.Body.
func (b *Body) NewReader() io.ReadCloser { return &bodyReader{body: b} }

// bodyReader reads a Body from its start.
type bodyReader struct {
	body *Body
	part int // next part; fillAt while in the filler
	off  int // offset in the current part, or in line
	// The filler: its next line number and the current line's bytes.
	inFill   bool
	fillDone bool
	k, left  int
	line     []byte
	lineBuf  [2 * maxFillerLine]byte
}

var _ io.ReadCloser = (*bodyReader)(nil)

// Read implements io.Reader.
func (r *bodyReader) Read(p []byte) (int, error) {
	n := 0
	b := r.body
	for n < len(p) {
		if r.part == b.fillAt && !r.fillDone {
			if !r.inFill {
				r.inFill, r.k, r.left = true, 0, b.fill.n
			}
			if r.off == len(r.line) {
				if !r.nextLine() {
					r.fillDone, r.inFill, r.off = true, false, 0
					continue
				}
			}
			c := copy(p[n:], r.line[r.off:])
			n += c
			r.off += c
			continue
		}
		if r.part >= b.nparts {
			break
		}
		c := copy(p[n:], b.parts[r.part][r.off:])
		n += c
		r.off += c
		if r.off == len(b.parts[r.part]) {
			r.part, r.off = r.part+1, 0
		}
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// nextLine generates the next filler line into r.line, or reports the end.
func (r *bodyReader) nextLine() bool {
	if r.left <= 0 {
		return false
	}
	f := r.body.fill
	raw := len(lineStart) + digits(f.offset+r.k) + len(lineMiddle) + digits(r.k) + len(lineEnd)
	if raw > r.left {
		r.line = f.lastLine(r.lineBuf[:0], r.k, r.left)
		r.left = 0
	} else {
		r.line = f.appendLine(r.lineBuf[:0], r.k)
		r.left -= raw
	}
	r.k++
	r.off = 0
	return true
}

// Close implements io.Closer.
func (r *bodyReader) Close() error { return nil }

var _ client.Body = (*Body)(nil)

// Body is Append as a streamed request body of enc: its head, the quoted
// prompt (prefix, "\n", calibration line, filler, closing instruction) and
// its tail, with the prefix's lines taken from the run's shared pieces and
// the filler generated when read.
func (l *Layout) Body(enc *client.Encoder, label, offset, context, budget int, kind Kind) (*Body, error) {
	warmup := kind == Warmup
	var header []byte
	shared := 0 // characters of the shared lines in the prefix
	if l.cfg.Unique {
		header = l.appendHeader(nil, label, kind != Measured)
		shared = max(l.cfg.PrefixChars-len(header), 0)
	} else {
		shared = len(l.shared)
	}
	tail := l.AppendTail(nil, label, warmup)
	prefixLen := len(header) + shared
	n := budget - prefixLen - len(tail) - 1
	var calib string
	hasFiller := n > 0 // the prompt has "\n", then filler room (maybe all taken by the calibration line)
	if !hasFiller {
		cut := budget - len(tail)
		if cut < 0 {
			return nil, tailError(label, context, budget, len(tail))
		}
		keep := min(prefixLen, cut)
		if keep <= len(header) {
			header, shared = header[:keep], 0
		} else {
			shared = keep - len(header)
		}
	} else if kind == Calibration {
		mark := min(n, len(calibrationLine))
		calib = calibrationLine[:mark]
		n -= mark
	}

	// The request's own bytes, escaped, in one small array.
	own := make([]byte, 0, 2*(len(header)+len(calib)+len(tail))+8)
	own = append(own, '"')
	own = appendEscaped(own, header)
	pre := own[:len(own):len(own)]
	own = own[len(own):]
	if hasFiller {
		own = append(own, `\n`...)
		own = appendEscaped(own, []byte(calib))
	}
	mid := own[:len(own):len(own)]
	own = own[len(own):]
	own = appendEscaped(own, tail)
	own = append(own, '"')
	post := own

	b := &Body{}
	b.add(enc.Head())
	b.add(pre)
	if shared > 0 {
		b.add(l.pieces.escapedPrefix(shared))
	}
	b.add(mid)
	b.fillAt = b.nparts
	if n > 0 {
		b.fill = filler{offset: offset, n: n}
		b.length += b.fill.size()
	}
	b.add(post)
	b.add(enc.Tail())
	return b, nil
}

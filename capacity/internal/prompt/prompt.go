// Package prompt writes the synthetic prompts of a capacity run
// (capacity/PROTOCOL.md#prompts): filler lines that follow a formula,
// a prefix shared by every request or a request-specific one, and a
// closing instruction that names the request (with its canary and the
// controlled output's word count when asked). A Layout holds what one
// run's prompts share; Append writes a prompt into a buffer, Body the
// request body that carries it, streamed from the shared pieces without
// building the prompt (the bytes are those of Append, JSON-quoted between
// an Encoder's head and tail). Chars is the reference's sizing: a context
// of c tokens is int(c * CharsPerToken) characters.
package prompt

import (
	"fmt"
	"strconv"

	"github.com/anvilbench/anvil/capacity/internal/client"
)

// CharsPerToken is the reference's estimate of characters per prompt
// token: a context of c tokens is filled with int(c * 3.0) characters. (The
// seed artifact's model produced 62,330 prompt tokens for a 65,536-token
// plan.)
const CharsPerToken = 3.0

// The pieces of a prompt (capacity/PROTOCOL.md#prompts). Every filler line is
//
//	def helper_{i}():\n    return compute({k})  # routine specialist context\n
//
// and a prompt ends with a closing instruction naming its request index.
const (
	lineStart   = "def helper_"
	lineMiddle  = "():\n    return compute("
	lineEnd     = ")  # routine specialist context\n"
	tailStart   = "\n# request "
	warmupStart = "\n# warmup request "
	summarize   = "summarize the above in one line."
)

// Chars is the number of characters of a prompt sized for tokens.
func Chars(tokens int) int { return int(float64(tokens) * CharsPerToken) }

// AppendLines appends lines(offset, n) of capacity/PROTOCOL.md#prompts:
// line(offset+0, 0) + line(offset+1, 1) + ... until it holds at least n
// characters, cut to n. All characters are ASCII, so bytes are characters.
func AppendLines(dst []byte, offset, n int) []byte {
	start := len(dst)
	for k := 0; len(dst)-start < n; k++ {
		dst = append(dst, lineStart...)
		dst = strconv.AppendInt(dst, int64(offset+k), 10)
		dst = append(dst, lineMiddle...)
		dst = strconv.AppendInt(dst, int64(k), 10)
		dst = append(dst, lineEnd...)
	}
	return dst[:start+max(n, 0)]
}

// Config is what the prompts of one run are made of (the resolved
// Workload's prompt fields).
type Config struct {
	// Canaries asks each measured answer to begin with its request's
	// canary marker of Seed (Workload.RequestCanaries).
	Canaries bool
	Seed     int64
	// ResponseWords, when > 0, asks for exactly that many words
	// client.ControlledOutputWord instead of a summary.
	ResponseWords int
	// Unique opens every prompt with a request-specific header naming the
	// request and Nonce ("": none) instead of the shared prefix
	// (Workload.PromptCacheMode "unique").
	Unique bool
	Nonce  string
	// PrefixChars is the prefix's characters: the shared prefix, or in
	// unique mode the header and the filler after it.
	PrefixChars int
}

// A Layout writes the prompts of one run. It is immutable and safe for
// concurrent use.
type Layout struct {
	cfg Config
	// shared is the prefix of every prompt in shared mode (the raw lines
	// of pieces).
	shared []byte
	// pieces are the prompt lines every request shares, JSON-escaped once
	// for the streamed bodies.
	pieces *sharedPieces
}

// New returns the layout of cfg, its shared lines built (and escaped)
// once.
func New(cfg Config) (*Layout, error) {
	pieces, err := newSharedPieces(max(cfg.PrefixChars, 0))
	if err != nil {
		return nil, err
	}
	l := &Layout{cfg: cfg, pieces: pieces}
	if !cfg.Unique {
		l.shared = pieces.raw
	}
	return l, nil
}

// Kind is what a prompt is sent for.
type Kind int

const (
	// Measured: a measured request.
	Measured Kind = iota
	// Warmup: a warm-up request, labelled "warmup request".
	Warmup
	// Calibration: an unmeasured request of exact sizing that stands for
	// a measured request: its layout, filler numbering and closing
	// instruction, except for calibrationLine at the start of the filler
	// (and, in unique mode, the warm-up prefix), so that no server cache
	// it warms serves the measured request.
	Calibration
)

// calibrationLine opens the filler of a calibration prompt.
const calibrationLine = "# calibration\n"

// AppendTail appends the closing instruction of a request. Without
// canaries and response words it is the reference's
// "\n# request {index}: summarize the above in one line.". A canary asks
// the answer to begin with the request's marker; response words replace
// the summary by a request for exactly N words "code". Warm-up requests
// are labelled "warmup request" and carry no canary.
func (l *Layout) AppendTail(dst []byte, index int, warmup bool) []byte {
	if warmup {
		dst = append(dst, warmupStart...)
	} else {
		dst = append(dst, tailStart...)
	}
	dst = strconv.AppendInt(dst, int64(index), 10)
	dst = append(dst, ": "...)
	if l.cfg.Canaries && !warmup {
		dst = append(dst, "begin your answer with "...)
		dst = client.AppendCanaryMarker(dst, l.cfg.Seed, index)
		dst = append(dst, ", then "...)
	}
	words := l.cfg.ResponseWords
	switch {
	case words == 1:
		dst = append(dst, "reply with exactly 1 word: the lowercase word "+client.ControlledOutputWord+", and nothing else."...)
	case words > 1:
		dst = append(dst, "reply with exactly "...)
		dst = strconv.AppendInt(dst, int64(words), 10)
		dst = append(dst, " words: the lowercase word "+client.ControlledOutputWord+" repeated "...)
		dst = strconv.AppendInt(dst, int64(words), 10)
		dst = append(dst, " times, separated by spaces, and nothing else."...)
	default:
		dst = append(dst, summarize...)
	}
	return dst
}

// appendHeader appends the request-specific header that opens a
// unique-mode prefix, naming the request and, unless omitted, the run's
// nonce, so the very first tokens differ between requests and between
// runs.
func (l *Layout) appendHeader(dst []byte, index int, notMeasured bool) []byte {
	dst = append(dst, "# request-specific prefix for "...)
	if notMeasured {
		dst = append(dst, "warmup "...)
	}
	dst = append(dst, "request "...)
	dst = strconv.AppendInt(dst, int64(index), 10)
	if l.cfg.Nonce != "" {
		dst = append(dst, " of run "...)
		dst = append(dst, l.cfg.Nonce...)
	}
	return append(dst, '\n')
}

// appendPrefix appends the prefix of a prompt: the shared prefix in shared
// mode, or in unique mode the request's header followed by filler up to
// the prefix size.
func (l *Layout) appendPrefix(dst []byte, index int, notMeasured bool) []byte {
	if !l.cfg.Unique {
		return append(dst, l.shared...)
	}
	start := len(dst)
	dst = l.appendHeader(dst, index, notMeasured)
	return AppendLines(dst, 0, max(l.cfg.PrefixChars-(len(dst)-start), 0))
}

// Append appends one prompt of budget characters B to dst and returns the
// extended buffer; label is the request number the prompt names, offset
// the first filler line's helper number, context the planned context
// (named in errors). With prefix P and closing instruction T, the prompt
// is P + "\n" + lines(offset, B-len(P)-len(T)-1) + T; when that leaves no
// room for filler it is P cut to B-len(T) characters followed by T, and
// an error when B cannot hold T. In shared mode without canaries or
// response words a measured prompt of B = Chars(context) is
// byte-identical to the reference tool's. Reusing dst across requests
// makes building allocation-free once it has grown to the largest prompt.
func (l *Layout) Append(dst []byte, label, offset, context, budget int, kind Kind) ([]byte, error) {
	start := len(dst)
	warmup := kind == Warmup
	dst = l.appendPrefix(dst, label, kind != Measured)
	prefixLen := len(dst) - start
	// Build the tail once to learn its length, then drop it.
	dst = l.AppendTail(dst, label, warmup)
	tailLen := len(dst) - start - prefixLen
	dst = dst[:start+prefixLen]
	n := budget - prefixLen - tailLen - 1
	if n <= 0 {
		cut := budget - tailLen
		if cut < 0 {
			return dst[:start], tailError(label, context, budget, tailLen)
		}
		dst = dst[:start+min(prefixLen, cut)]
		return l.AppendTail(dst, label, warmup), nil
	}
	dst = append(dst, '\n')
	if kind == Calibration {
		mark := min(n, len(calibrationLine))
		dst = append(dst, calibrationLine[:mark]...)
		n -= mark
	}
	dst = AppendLines(dst, offset, n)
	return l.AppendTail(dst, label, warmup), nil
}

// tailError is a budget too small for the closing instruction.
func tailError(label, context, budget, tailLen int) error {
	return fmt.Errorf("capacity: request %d: a context of %d tokens (%d characters) cannot hold its %d-character closing instruction",
		label, context, budget, tailLen)
}

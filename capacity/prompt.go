package capacity

import (
	"fmt"
	"strconv"

	"github.com/anvilbench/anvil/capacity/internal/client"
)

// promptCharsPerToken is the reference's estimate of characters per prompt
// token: a context of c tokens is filled with int(c * 3.0) characters. (The
// seed artifact's model produced 62,330 prompt tokens for a 65,536-token
// plan.)
const promptCharsPerToken = 3.0

// The pieces of a prompt (capacity/PROTOCOL.md#prompts). Every filler line is
//
//	def helper_{i}():\n    return compute({k})  # routine specialist context\n
//
// and a prompt ends with a closing instruction naming its request index.
const (
	promptLineStart   = "def helper_"
	promptLineMiddle  = "():\n    return compute("
	promptLineEnd     = ")  # routine specialist context\n"
	promptTailStart   = "\n# request "
	promptWarmupStart = "\n# warmup request "
	promptSummarize   = "summarize the above in one line."
)

// promptChars is the number of characters of a prompt sized for tokens.
func promptChars(tokens int) int { return int(float64(tokens) * promptCharsPerToken) }

// appendLines appends lines(offset, n) of capacity/PROTOCOL.md#prompts:
// line(offset+0, 0) + line(offset+1, 1) + ... until it holds at least n
// characters, cut to n. All characters are ASCII, so bytes are characters.
func appendLines(dst []byte, offset, n int) []byte {
	start := len(dst)
	for k := 0; len(dst)-start < n; k++ {
		dst = append(dst, promptLineStart...)
		dst = strconv.AppendInt(dst, int64(offset+k), 10)
		dst = append(dst, promptLineMiddle...)
		dst = strconv.AppendInt(dst, int64(k), 10)
		dst = append(dst, promptLineEnd...)
	}
	return dst[:start+max(n, 0)]
}

// appendTail appends the closing instruction of a request. Without canaries
// and response words it is the reference's
// "\n# request {index}: summarize the above in one line.". A canary asks the
// answer to begin with the request's marker; response words replace the
// summary by a request for exactly N words "code". Warm-up requests are
// labelled "warmup request" and carry no canary.
func (p *plan) appendTail(dst []byte, index int, warmup bool) []byte {
	if warmup {
		dst = append(dst, promptWarmupStart...)
	} else {
		dst = append(dst, promptTailStart...)
	}
	dst = strconv.AppendInt(dst, int64(index), 10)
	dst = append(dst, ": "...)
	if p.Workload.RequestCanaries && !warmup {
		dst = append(dst, "begin your answer with "...)
		dst = client.AppendCanaryMarker(dst, p.Workload.Seed, index)
		dst = append(dst, ", then "...)
	}
	words := p.Workload.ResponseWords
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
		dst = append(dst, promptSummarize...)
	}
	return dst
}

// appendPrefix appends the prefix of a prompt: the shared prefix in shared
// mode, or in unique mode a request-specific header (naming the request
// and, unless omitted, the run's nonce) followed by filler up to the prefix
// size, so the very first tokens differ between requests and between runs.
func (p *plan) appendPrefix(dst []byte, index int, warmup bool) []byte {
	if p.Workload.PromptCacheMode != promptCacheUnique {
		return append(dst, p.sharedPrefix...)
	}
	start := len(dst)
	dst = append(dst, "# request-specific prefix for "...)
	if warmup {
		dst = append(dst, "warmup "...)
	}
	dst = append(dst, "request "...)
	dst = strconv.AppendInt(dst, int64(index), 10)
	if p.Nonce != "" {
		dst = append(dst, " of run "...)
		dst = append(dst, p.Nonce...)
	}
	dst = append(dst, '\n')
	rest := promptChars(p.Workload.sharedPrefixTokens()) - (len(dst) - start)
	return appendLines(dst, 0, max(rest, 0))
}

// AppendPrompt appends the prompt of measured request index to dst and
// returns the extended buffer. With B = int(context * 3.0) characters for
// the request's planned context, prefix P and closing instruction T, the
// prompt is P + "\n" + lines(index, B-len(P)-len(T)-1) + T; when that leaves
// no room for filler it is P cut to B-len(T) characters followed by T. In
// shared mode without canaries or response words it is byte-identical to
// the reference tool's prompt. Reusing dst across requests makes building
// allocation-free once the buffer has grown to the largest prompt.
//
// With exact sizing (Workload.PromptSizing) B is the character budget the
// sizing found for the request instead; the layout is the same.
func (p *plan) AppendPrompt(dst []byte, index int) ([]byte, error) {
	if index < 0 || index >= len(p.Contexts) {
		return dst, fmt.Errorf("capacity: request index %d: must be in 0..%d", index, len(p.Contexts)-1)
	}
	return p.appendPrompt(dst, index, index, p.Contexts[index], p.promptChars(index), promptMeasured)
}

// promptChars is the character budget B of measured request index: the
// exact sizing's when there is one, else int(context * 3.0).
func (p *plan) promptChars(index int) int {
	if p.chars != nil {
		return p.chars[index]
	}
	return promptChars(min(p.Contexts[index], p.PromptBudget))
}

// promptKind is what a prompt is sent for.
type promptKind int

const (
	// promptMeasured: a measured request.
	promptMeasured promptKind = iota
	// promptWarmup: a warm-up request, labelled "warmup request".
	promptWarmup
	// promptCalibration: an unmeasured request of exact sizing that
	// stands for measured request index: its layout, filler numbering and
	// closing instruction, except for calibrationLine at the start of the
	// filler (and, in unique mode, the warm-up prefix), so that no server
	// cache it warms serves the measured request.
	promptCalibration
)

// calibrationLine opens the filler of a calibration prompt.
const calibrationLine = "# calibration\n"

// appendCalibrationPrompt appends the calibration prompt standing for
// measured request index, of chars characters.
func (p *plan) appendCalibrationPrompt(dst []byte, index, chars int) ([]byte, error) {
	return p.appendPrompt(dst, index, index, p.Contexts[index], chars, promptCalibration)
}

// AppendWarmupPrompt appends the prompt of warm-up request k (0-based),
// sized like measured request k mod Len. Its filler and closing instruction
// differ from every measured prompt's, and it carries no canary, so warm-up
// responses are never mistaken for measured ones; in shared mode it warms
// the shared prefix like any request.
func (p *plan) AppendWarmupPrompt(dst []byte, k int) ([]byte, error) {
	if k < 0 || len(p.Contexts) == 0 {
		return dst, fmt.Errorf("capacity: warm-up request %d: must be >= 0 in a non-empty plan", k)
	}
	return p.appendPrompt(dst, k, p.Workload.Requests+k, p.Contexts[k%len(p.Contexts)], p.promptChars(k%len(p.Contexts)), promptWarmup)
}

// appendPrompt builds one prompt of budget characters; label is the number
// the prompt names, offset the first filler line's helper number, context
// the planned context (named in errors).
func (p *plan) appendPrompt(dst []byte, label, offset, context, budget int, kind promptKind) ([]byte, error) {
	start := len(dst)
	warmup := kind == promptWarmup
	dst = p.appendPrefix(dst, label, kind != promptMeasured)
	prefixLen := len(dst) - start
	// Build the tail once to learn its length, then drop it.
	dst = p.appendTail(dst, label, warmup)
	tailLen := len(dst) - start - prefixLen
	dst = dst[:start+prefixLen]
	n := budget - prefixLen - tailLen - 1
	if n <= 0 {
		cut := budget - tailLen
		if cut < 0 {
			return dst[:start], fmt.Errorf("capacity: request %d: a context of %d tokens (%d characters) cannot hold its %d-character closing instruction",
				label, context, budget, tailLen)
		}
		dst = dst[:start+min(prefixLen, cut)]
		return p.appendTail(dst, label, warmup), nil
	}
	dst = append(dst, '\n')
	if kind == promptCalibration {
		mark := min(n, len(calibrationLine))
		dst = append(dst, calibrationLine[:mark]...)
		n -= mark
	}
	dst = appendLines(dst, offset, n)
	return p.appendTail(dst, label, warmup), nil
}

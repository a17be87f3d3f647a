package capacity

import (
	"fmt"
	"strconv"

	"github.com/anvilbench/anvil/capacity/internal/client"
)

// The streamed form of the prompts of prompt.go: the same layout, as parts
// of a request body (body_stream.go) instead of bytes in a buffer.

// measuredBody is the streamed request body of measured request index.
func (p *plan) measuredBody(enc *client.Encoder, index int) (*streamedBody, error) {
	if index < 0 || index >= len(p.Contexts) {
		return nil, fmt.Errorf("capacity: request index %d: must be in 0..%d", index, len(p.Contexts)-1)
	}
	return p.streamPrompt(enc, index, index, p.Contexts[index], p.promptChars(index), promptMeasured)
}

// warmupBody is the streamed request body of warm-up request k.
func (p *plan) warmupBody(enc *client.Encoder, k int) (*streamedBody, error) {
	if k < 0 || len(p.Contexts) == 0 {
		return nil, fmt.Errorf("capacity: warm-up request %d: must be >= 0 in a non-empty plan", k)
	}
	return p.streamPrompt(enc, k, p.Workload.Requests+k, p.Contexts[k%len(p.Contexts)], p.promptChars(k%len(p.Contexts)), promptWarmup)
}

// uniqueHeader appends the request-specific header that opens a
// unique-mode prefix (see appendPrefix).
func (p *plan) uniqueHeader(dst []byte, index int, notMeasured bool) []byte {
	dst = append(dst, "# request-specific prefix for "...)
	if notMeasured {
		dst = append(dst, "warmup "...)
	}
	dst = append(dst, "request "...)
	dst = strconv.AppendInt(dst, int64(index), 10)
	if p.Nonce != "" {
		dst = append(dst, " of run "...)
		dst = append(dst, p.Nonce...)
	}
	return append(dst, '\n')
}

// streamPrompt is appendPrompt as a streamed body: head, the quoted
// prompt (prefix, "\n", calibration line, filler, closing instruction) and
// tail, with the prefix's lines taken from the run's shared pieces and the
// filler generated when read.
func (p *plan) streamPrompt(enc *client.Encoder, label, offset, context, budget int, kind promptKind) (*streamedBody, error) {
	warmup := kind == promptWarmup
	var header []byte
	shared := 0 // characters of the shared lines in the prefix
	if p.Workload.PromptCacheMode == promptCacheUnique {
		header = p.uniqueHeader(nil, label, kind != promptMeasured)
		shared = max(promptChars(p.Workload.sharedPrefixTokens())-len(header), 0)
	} else {
		shared = len(p.sharedPrefix)
	}
	tail := p.appendTail(nil, label, warmup)
	prefixLen := len(header) + shared
	n := budget - prefixLen - len(tail) - 1
	var calib string
	hasFiller := n > 0 // the prompt has "\n", then filler room (maybe all taken by the calibration line)
	if !hasFiller {
		cut := budget - len(tail)
		if cut < 0 {
			return nil, fmt.Errorf("capacity: request %d: a context of %d tokens (%d characters) cannot hold its %d-character closing instruction",
				label, context, budget, len(tail))
		}
		keep := min(prefixLen, cut)
		if keep <= len(header) {
			header, shared = header[:keep], 0
		} else {
			shared = keep - len(header)
		}
	} else if kind == promptCalibration {
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

	b := &streamedBody{}
	b.add(enc.Head())
	b.add(pre)
	if shared > 0 {
		b.add(p.pieces.escapedPrefix(shared))
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

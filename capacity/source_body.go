package capacity

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// errorTypeSourceRequest is the error_type of a runner_error row whose
// request, as a Workload.Source described it, could not be built (a
// reserved body field, a prompt that does not fit): it was never sent.
const errorTypeSourceRequest = "source_request"

// planSource is the Source of the synthetic workload: request i is the
// plan's request i, whose body is the plan's streamed body (byte for byte
// the reference tool's prompt).
type planSource struct{ p *plan }

// Request implements Source.
func (s planSource) Request(i int) (Request, error) {
	return Request{PromptTokens: s.p.Contexts[i], plan: true}, nil
}

// sourceBodies builds the bodies of the requests a Workload.Source
// describes: the run's fixed fields (bodyFields) with the request's
// max_tokens and body fields over them, and its messages, or a prompt of
// the plan's layout for its planned tokens.
type sourceBodies struct {
	target Target   // resolved, Model filled in
	w      Workload // resolved
	plan   *plan
}

// sourceBody is a built request body and what its checks need.
type sourceBody struct {
	body      requestBody
	planned   int // planned_context_tokens
	maxTokens int // the max_tokens sent
}

// build returns the body of measured request i as req describes it.
func (b *sourceBodies) build(i int, req Request) (sourceBody, error) {
	maxTokens := req.MaxTokens
	if maxTokens == 0 {
		maxTokens = b.w.MaxTokens
	}
	if maxTokens < 1 || maxTokens > MaxMaxTokens {
		return sourceBody{}, fmt.Errorf("capacity: Workload.Source: request %d: MaxTokens %d must be 0 (the workload's) or in 1..%d", i, req.MaxTokens, MaxMaxTokens)
	}
	fields := bodyFields(b.target, b.w)
	fields["max_tokens"] = maxTokens
	for _, k := range slices.Sorted(maps.Keys(req.Body)) {
		if owner, ok := reservedBodyFields[k]; ok {
			return sourceBody{}, fmt.Errorf("capacity: Workload.Source: request %d: body field %q is set by %s and may not be overridden", i, k, owner)
		}
		if !json.Valid(req.Body[k]) {
			return sourceBody{}, fmt.Errorf("capacity: Workload.Source: request %d: body field %q is not valid JSON", i, k)
		}
		fields[k] = req.Body[k]
	}
	planned := max(req.PromptTokens, 0)
	msgs := make([]wireMessage, 0, max(len(req.Messages), 1))
	if req.Messages != nil {
		for _, m := range req.Messages {
			msgs = append(msgs, wireMessage{Content: m.Content, Role: m.Role})
		}
	} else {
		budget := b.plan.MaxModelLen - maxTokens - b.plan.Margin
		if budget <= 0 || planned <= 0 {
			return sourceBody{}, fmt.Errorf("capacity: Workload.Source: request %d: a planned prompt needs PromptTokens > 0 (got %d) and a prompt budget left after MaxTokens %d (got %d tokens)", i, req.PromptTokens, maxTokens, budget)
		}
		planned = min(planned, budget)
		var prompt []byte
		var err error
		if len(req.PrefixBlocks) > 0 {
			prompt, err = b.blockPrompt(i, planned, req)
		} else {
			prompt, err = b.plan.appendPrompt(nil, i, i, planned, promptChars(planned), promptMeasured)
		}
		if err != nil {
			return sourceBody{}, err
		}
		msgs = append(msgs, wireMessage{Content: string(prompt), Role: "user"})
	}
	// {"messages":[...], then the other fields sorted, as the plan's bodies.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	buf.WriteString(`{"messages":`)
	if err := enc.Encode(msgs); err != nil {
		return sourceBody{}, err
	}
	buf.Truncate(buf.Len() - 1) // the encoder's newline
	var rest bytes.Buffer
	renc := json.NewEncoder(&rest)
	renc.SetEscapeHTML(false)
	if err := renc.Encode(fields); err != nil {
		return sourceBody{}, fmt.Errorf("capacity: Workload.Source: request %d: the body does not encode as JSON: %w", i, err)
	}
	buf.WriteByte(',')
	buf.Write(bytes.TrimSpace(rest.Bytes())[1:])
	bb := &bodyBuffer{}
	bb.buf = append(bb.reset(), buf.Bytes()...)
	return sourceBody{body: bb, planned: planned, maxTokens: maxTokens}, nil
}

// wireMessage is a chat message as the request body writes it.
type wireMessage struct {
	Content string `json:"content"`
	Role    string `json:"role"`
}

// blockLetters open the first line of a prefix block: the letter of id mod
// 52, so that blocks whose ids differ there differ from their first
// character.
const blockLetters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// blockLineOffset spaces the filler numbering of prefix blocks: block id's
// filler lines are numbered from (id+1) * blockLineOffset, far from every
// plan prompt's (which start at the request index).
const blockLineOffset = 1 << 20

// appendBlock appends the text of prefix block id, chars characters: the
// line "{letter}{id} block\n", then filler lines numbered from the id's
// own offset. The text depends on the id and the size alone.
func appendBlock(dst []byte, id, chars int) []byte {
	start := len(dst)
	dst = append(dst, blockLetters[((id%len(blockLetters))+len(blockLetters))%len(blockLetters)])
	dst = strconv.AppendInt(dst, int64(id), 10)
	dst = append(dst, " block\n"...)
	dst = appendLines(dst, (id+1)*blockLineOffset, chars-(len(dst)-start))
	return dst[:start+chars]
}

// blockPrompt is the planned prompt of request i opening with req's
// prefix blocks: the blocks, cut to the prompt's size less its closing
// instruction, then request i's own filler, then the closing instruction.
func (b *sourceBodies) blockPrompt(i, planned int, req Request) ([]byte, error) {
	if req.BlockTokens <= 0 {
		return nil, fmt.Errorf("capacity: Workload.Source: request %d: PrefixBlocks need BlockTokens > 0 (got %d)", i, req.BlockTokens)
	}
	budget := promptChars(planned)
	tail := b.plan.appendTail(nil, i, false)
	room := budget - len(tail)
	if room < 0 {
		return nil, fmt.Errorf("capacity: Workload.Source: request %d: a prompt of %d tokens cannot hold its %d-character closing instruction", i, planned, len(tail))
	}
	block := promptChars(req.BlockTokens)
	dst := make([]byte, 0, budget)
	for _, id := range req.PrefixBlocks {
		if len(dst) >= room {
			break
		}
		dst = appendBlock(dst, id, block)
	}
	dst = dst[:min(len(dst), room)]
	if rest := room - len(dst); rest > 0 {
		dst = appendLines(dst, i, rest)
	}
	return append(dst, tail...), nil
}

package capacity

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/anvilbench/anvil/capacity/internal/blocktext"
	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/prompt"
)

// planSource is the Source of the synthetic workload: request i is the
// plan's request i, whose body is the plan's streamed body (byte for byte
// the reference tool's prompt).
type planSource struct{ p *plan }

// Request implements Source.
func (s planSource) Request(_ context.Context, i int) (Request, error) {
	return Request{PromptTokens: s.p.Contexts[i], plan: true}, nil
}

// sourceBodies builds the bodies of the requests a Workload.Source
// describes: the run's fixed fields (requestOf) with the request's
// max_tokens and body fields over them, and its messages, or a prompt of
// the plan's layout for its planned tokens.
type sourceBodies struct {
	dialect client.Dialect
	target  Target   // resolved, Model filled in
	w       Workload // resolved
	plan    *plan
	window  int // the window the server serves; 0: unknown
}

// overWindowError is a source's request planned at or above the window
// the server serves: no prompt of that size fits, so none is built.
type overWindowError struct{ index, planned, window int }

func (e *overWindowError) Error() string {
	return fmt.Sprintf("capacity: Workload.Source: request %d is planned at %d prompt tokens, at or above the window of %d tokens the server serves: no prompt that long fits, so it was not built or sent",
		e.index, e.planned, e.window)
}

// sourceBody is a built request body and what its checks need.
type sourceBody struct {
	body      client.Body
	planned   int // planned_context_tokens
	maxTokens int // the max_tokens sent
	chars     int // the characters of its messages' contents
	inputs    int // an embeddings request's inputs (Exchange.Inputs)
}

// build returns the body of measured request i as req describes it.
func (b *sourceBodies) build(i int, req Request) (sourceBody, error) {
	if b.window > 0 && req.PromptTokens >= b.window {
		return sourceBody{}, &overWindowError{index: i, planned: req.PromptTokens, window: b.window}
	}
	maxTokens := req.MaxTokens
	if maxTokens == 0 {
		maxTokens = b.w.MaxTokens
	}
	if maxTokens < 1 || maxTokens > maxMaxTokens {
		return sourceBody{}, fmt.Errorf("capacity: Workload.Source: request %d: MaxTokens %d must be 0 (the workload's) or in 1..%d", i, req.MaxTokens, maxMaxTokens)
	}
	r := requestOf(b.target, b.w)
	r.MaxTokens = maxTokens
	api := b.target.apiOf()
	if api == client.APICompletions && req.Messages != nil {
		return sourceBody{}, fmt.Errorf("capacity: Workload.Source: request %d: the completions API (Target.API %q) sends one bare prompt, not a conversation: describe the request by PromptTokens, not Messages", i, client.APICompletions)
	}
	for _, k := range slices.Sorted(maps.Keys(req.Body)) {
		if owner, ok := reservedBy(api, k); ok {
			return sourceBody{}, fmt.Errorf("capacity: Workload.Source: request %d: body field %q is set by %s and may not be overridden", i, k, owner)
		}
		if !json.Valid(req.Body[k]) {
			return sourceBody{}, fmt.Errorf("capacity: Workload.Source: request %d: body field %q is not valid JSON", i, k)
		}
		r.Extra[k] = req.Body[k]
	}
	planned := max(req.PromptTokens, 0)
	r.Messages = make([]client.Message, 0, max(len(req.Messages), 1))
	chars := 0
	if req.Messages != nil {
		for _, m := range req.Messages {
			r.Messages = append(r.Messages, client.Message{Role: m.Role, Content: m.Content})
			chars += len(m.Content)
		}
	} else {
		budget := b.plan.MaxModelLen - maxTokens - b.plan.Margin
		if budget <= 0 || planned <= 0 {
			return sourceBody{}, fmt.Errorf("capacity: Workload.Source: request %d: a planned prompt needs PromptTokens > 0 (got %d) and a prompt budget left after MaxTokens %d (got %d tokens)", i, req.PromptTokens, maxTokens, budget)
		}
		planned = min(planned, budget)
		var text []byte
		var err error
		if len(req.PrefixBlocks) > 0 {
			text, err = b.blockPrompt(i, planned, req)
		} else {
			text, err = b.plan.layout.Append(nil, i, i, planned, prompt.Chars(planned), prompt.Measured)
		}
		if err != nil {
			return sourceBody{}, err
		}
		r.Messages = append(r.Messages, client.Message{Role: "user", Content: string(text)})
		chars = len(text)
	}
	// The conversation, then the other fields, as the plan's bodies.
	head, tail, err := b.dialect.Encode(&r)
	if err != nil {
		return sourceBody{}, fmt.Errorf("capacity: Workload.Source: request %d: the body does not encode as JSON: %w", i, err)
	}
	bb := &client.Buffer{}
	bb.Set(append(append(bb.Reset(), head...), tail...))
	return sourceBody{body: bb, planned: planned, maxTokens: maxTokens, chars: chars, inputs: len(r.Messages)}, nil
}

// blockPrompt is the planned prompt of request i opening with req's
// prefix blocks, written by package internal/blocktext as a trace replay's are (one
// block text for the module): the blocks, cut to the prompt's size less
// its closing instruction, then request i's own filler ("request {i}"),
// then the closing instruction.
func (b *sourceBodies) blockPrompt(i, planned int, req Request) ([]byte, error) {
	tail := b.plan.layout.AppendTail(nil, i, false)
	ids := make([]int64, len(req.PrefixBlocks))
	for k, id := range req.PrefixBlocks {
		ids[k] = int64(id)
	}
	layout := blocktext.Layout{BlockTokens: req.BlockTokens, Sizing: blocktext.SizingFunc(prompt.Chars)}
	budget := prompt.Chars(planned)
	dst, err := layout.AppendText(make([]byte, 0, budget), blocktext.Prompt{Blocks: ids, Own: "request " + strconv.Itoa(i), Tail: string(tail)}, budget)
	if err != nil {
		return nil, fmt.Errorf("capacity: Workload.Source: request %d: PrefixBlocks of %d tokens in a prompt of %d tokens: %w", i, req.BlockTokens, planned, err)
	}
	return dst, nil
}

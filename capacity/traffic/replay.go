package traffic

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/internal/blocktext"
	"github.com/anvilbench/anvil/capacity/trace"
)

// defaultCharsPerToken sizes prompts when no CharsPerToken is given: the
// reference's 3.0 characters per token (capacity/PROTOCOL.md#prompts).
const defaultCharsPerToken = blocktext.CharsPerToken(3)

// Replay is a trace replayed by a capacity run: measured request i is
// Records[i], due at its Offset from the start of the measured phase (a
// capacity.Schedule), with a prompt of its PromptTokens whose blocks
// repeat as the trace's block ids do and max_tokens its OutputTokens (a
// capacity.Source). Use it through Workload.
type Replay struct {
	// Records are the trace's requests in order, as a trace.Reader yields
	// them (Offset already divided by the speed-up).
	Records []trace.Record
	// CharsPerToken turns tokens into prompt characters; 0 is the
	// reference's 3.0 characters per token.
	CharsPerToken float64
	// Salt is written into every block and every request's own text:
	// give each run its own (a nonce) so that a
	// replay never finds an earlier run's blocks in the server's cache.
	Salt string
	// IgnoreEOS sends "ignore_eos": true and "min_tokens": the recorded
	// output length with every request, the vLLM and SGLang fields that
	// make the model produce exactly max_tokens tokens. A server that
	// rejects unknown fields fails every request with it.
	IgnoreEOS bool
	// Description is the trace the Records were read from
	// (trace.Reader.Description), written into the artifact as
	// anvil_go.workload.trace; nil writes the workload without it.
	Description *trace.Description
}

var (
	_ capacity.SizedSource = Replay{}
	_ capacity.Schedule    = Replay{}
)

// Workload returns w with the replay as its Source and Schedule, one
// measured request per record, and among its Observers one that writes
// anvil_go.workload (the trace, the send lag) and each request's
// trace_line into the artifact.
func (r Replay) Workload(w capacity.Workload) capacity.Workload {
	w.Source, w.Schedule, w.Requests = r, r, len(r.Records)
	w.Observers = append(w.Observers[:len(w.Observers):len(w.Observers)], replayObserver{r})
	return w
}

// SizedBy implements capacity.SizedSource: the replay with every prompt
// sized to count its record's PromptTokens on the server, the chat
// template's fixed tokens included (capacity/PROTOCOL.md#exact-sizing-traffic).
// Every block is the one length at which a block counts its BlockTokens,
// so equal block ids stay byte-identical; each distinct block is counted
// once, and each prompt's budget is searched until its blocks' counts
// and its own text's make its plan. A record planned below what its
// least prompt counts is sent at that least prompt (Request.LeastTokens).
func (r Replay) SizedBy(ctx context.Context, s capacity.Sizer) (capacity.Source, error) {
	t0, err := s.Template(ctx, 0)
	if err != nil {
		return nil, err
	}
	specs := make([]textSpec, len(r.Records))
	blockTokens := 0
	for i, rec := range r.Records {
		specs[i] = textSpec{blocks: rec.Blocks, own: ownText(lineOwn(rec.Line), r.Salt), tail: replayTail(i),
			tokens: rec.PromptTokens - t0, request: rec.PromptTokens}
		if len(rec.Blocks) > 0 {
			if blockTokens != 0 && rec.BlockTokens != blockTokens {
				return nil, fmt.Errorf("traffic: trace line %d: blocks of %d tokens after blocks of %d: one block size a replay", rec.Line, rec.BlockTokens, blockTokens)
			}
			blockTokens = rec.BlockTokens
		}
	}
	// No trace has a line 0; the median request's tail is as long as most.
	sample := textSpec{own: lineOwn(0), tail: replayTail(len(r.Records) / 2)}
	z, err := sizeTexts(ctx, s, specs, blockTokens, r.Salt, sample)
	if err != nil {
		return nil, err
	}
	return sizedReplay{r: r, z: z, template: t0}, nil
}

// sizedReplay is a Replay whose prompts exact sizing sized.
type sizedReplay struct {
	r        Replay
	z        textSizing
	template int
}

// Request implements capacity.Source: Replay.Request with the sized
// prompt.
func (s sizedReplay) Request(_ context.Context, i int) (capacity.Request, error) {
	req, err := s.r.request(i, func(rec trace.Record) (string, error) {
		st := s.z.texts[i]
		if st.overWindow {
			return "", nil // refused before its body is built: no text to write
		}
		tail := ""
		if st.tail {
			tail = replayTail(i)
		}
		l := blocktext.Layout{BlockTokens: rec.BlockTokens, BlockLen: s.z.blockLen, Salt: s.r.Salt}
		b, err := l.AppendText(nil, blocktext.Prompt{Blocks: rec.Blocks, Own: ownText(lineOwn(rec.Line), s.r.Salt), Tail: tail}, st.budget)
		return string(b), err
	})
	if st := s.z.texts[i]; err == nil && st.unsizable {
		req.LeastTokens = s.template + st.least
	}
	return req, err
}

// Due implements capacity.Schedule: request i is due at Records[i].Offset
// (the last record's for an index past the end).
func (r Replay) Due(_ context.Context, i int) capacity.Due {
	if len(r.Records) == 0 {
		return capacity.DueNow()
	}
	return capacity.DueAt(r.Records[min(i, len(r.Records)-1)].Offset)
}

// Request implements capacity.Source: one user message of
// PromptTokens x CharsPerToken characters, written by blocktext from the
// record's blocks (no blocks: all of it the request's own text), closed
// by "\n# request {i}: summarize the above in one line." when that fits.
func (r Replay) Request(_ context.Context, i int) (capacity.Request, error) {
	return r.request(i, func(rec trace.Record) (string, error) {
		return prompt(r.CharsPerToken, rec.Blocks, rec.BlockTokens, rec.PromptTokens, r.Salt, lineOwn(rec.Line), replayTail(i))
	})
}

// replayTail is the closing instruction of replayed request i.
func replayTail(i int) string {
	return "\n# request " + padded(i) + ": summarize the above in one line."
}

// request is request i with the prompt text writes.
func (r Replay) request(i int, text func(trace.Record) (string, error)) (capacity.Request, error) {
	if i < 0 || i >= len(r.Records) {
		return capacity.Request{}, fmt.Errorf("traffic: request %d of a trace of %d records", i, len(r.Records))
	}
	rec := r.Records[i]
	prompt, err := text(rec)
	if err != nil {
		return capacity.Request{}, fmt.Errorf("traffic: trace line %d: %w", rec.Line, err)
	}
	req := capacity.Request{
		Messages:     []capacity.Message{{Role: "user", Content: prompt}},
		PromptTokens: rec.PromptTokens,
		MaxTokens:    rec.OutputTokens,
		Session:      rec.Session,
	}
	if rec.Turn > 0 {
		req.Turn = rec.Turn - 1
	}
	if r.IgnoreEOS {
		req.Body = forceOutput(rec.OutputTokens)
	}
	return req, nil
}

// forceOutput is the body fields that make a vLLM or SGLang server
// produce n tokens.
func forceOutput(n int) map[string]json.RawMessage {
	return map[string]json.RawMessage{
		"ignore_eos": json.RawMessage("true"),
		"min_tokens": json.RawMessage(strconv.Itoa(n)),
	}
}

// sizingAt is charsPerToken as blocktext's sizing; 0 is
// defaultCharsPerToken.
func sizingAt(charsPerToken float64) blocktext.CharsPerToken {
	if charsPerToken == 0 {
		return defaultCharsPerToken
	}
	return blocktext.CharsPerToken(charsPerToken)
}

// prompt writes a prompt of tokens tokens at sizing, from its blocks of
// blockTokens tokens, its own text and a tail that is dropped when the
// prompt is too short to hold it.
func prompt(charsPerToken float64, blocks []int64, blockTokens, tokens int, salt, own, tail string) (string, error) {
	sizing := sizingAt(charsPerToken)
	layout := blocktext.Layout{BlockTokens: blockTokens, Sizing: sizing, Salt: salt}
	chars := sizing.Chars(tokens)
	if len(tail) > chars/2 {
		tail = ""
	}
	b, err := layout.AppendText(nil, blocktext.Prompt{Blocks: blocks, Own: ownText(own, salt), Tail: tail}, chars)
	return string(b), err
}

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

// SizedAt implements capacity.SizedSource: the replay with its prompts
// sized at charsPerToken characters per token, the ratio exact sizing
// learned from the server. One ratio sizes every block, so equal block
// ids stay byte-identical.
func (r Replay) SizedAt(charsPerToken float64) capacity.Source {
	r.CharsPerToken = charsPerToken
	return r
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
	if i < 0 || i >= len(r.Records) {
		return capacity.Request{}, fmt.Errorf("traffic: request %d of a trace of %d records", i, len(r.Records))
	}
	rec := r.Records[i]
	text, err := prompt(r.CharsPerToken, rec.Blocks, rec.BlockTokens, rec.PromptTokens, r.Salt,
		"trace line "+strconv.Itoa(rec.Line), "\n# request "+strconv.Itoa(i)+": summarize the above in one line.")
	if err != nil {
		return capacity.Request{}, fmt.Errorf("traffic: trace line %d: %w", rec.Line, err)
	}
	req := capacity.Request{
		Messages:     []capacity.Message{{Role: "user", Content: text}},
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
	if salt != "" {
		own += " " + salt
	}
	b, err := layout.AppendText(nil, blocktext.Prompt{Blocks: blocks, Own: own, Tail: tail}, chars)
	return string(b), err
}

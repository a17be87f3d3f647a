package capacity

import (
	"context"
	"encoding/json"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// The three seams of a run (capacity/PROTOCOL.md#seams): a Source says what
// measured request i is, a Schedule when it is due, and Observers are told
// when the measured phase starts and ends. Each is one small interface with
// a func adapter. The synthetic workload of the Workload fields is one
// Source and one Schedule among others; Workload.Source and
// Workload.Schedule replace them.

// Message is one chat message of an explicit conversation
// (Request.Messages), sent as {"role": Role, "content": Content}.
type Message struct {
	Role    string // "system", "user" or "assistant"
	Content string
}

// Request is what one measured request sends. Either Messages holds the
// conversation, or (Messages nil) the engine builds the prompt of the
// plan's layout (capacity/PROTOCOL.md#prompts) for PromptTokens tokens.
type Request struct {
	// Messages, when non-nil, is the conversation sent as "messages": for
	// a session, turn k+1 carries the earlier user messages and the
	// answers the server actually gave (see Answerer).
	Messages []Message
	// PromptTokens is the planned prompt size in tokens: the size the
	// engine builds the prompt for when Messages is nil (clamped to the
	// prompt budget left by MaxTokens), the planned_context_tokens of the
	// request's row either way, and the base of the truncation check
	// (usage.prompt_tokens at least half of it,
	// capacity/PROTOCOL.md#stream_validation_failed). 0 with Messages: no
	// plan (the floor is not checked).
	PromptTokens int
	// PrefixBlocks, with Messages nil, opens the planned prompt with one
	// block of BlockTokens tokens per id (each >= 0), in order (a Mooncake
	// trace's hash_ids): package internal/blocktext's text, so equal ids are
	// byte-identical text in every request of the run, and a block of
	// another id differs from its first line on (see
	// capacity/PROTOCOL.md#seams). The blocks are cut to the prompt's
	// size; the rest of PromptTokens is the request's own filler, then its
	// closing instruction.
	PrefixBlocks []int
	// BlockTokens is the size of every prefix block in tokens, > 0 with
	// PrefixBlocks.
	BlockTokens int
	// MaxTokens is the request's max_tokens, 1..65536; 0 sends the
	// workload's (Workload.MaxTokens).
	MaxTokens int
	// LeastTokens, above PromptTokens, says that a SizedSource could not
	// size the prompt for PromptTokens: the least prompt it can send (the
	// chat template's fixed tokens, its closing instruction) counts
	// LeastTokens, and is sent. The plan check counts the request as
	// unsizable instead of judging it (capacity/PROTOCOL.md#exact-token-sizing).
	LeastTokens int
	// Body holds extra request body fields of this request, merged over
	// Target.ExtraBody; the fields the engine controls (model, messages,
	// stream, stream_options, max_tokens, temperature, top_p,
	// chat_template_kwargs, reasoning_effort) may not be set here.
	Body map[string]json.RawMessage
	// Session and Turn name the conversation the request belongs to and
	// its 0-based turn; informational for sources and reporters ("" and 0
	// for requests that are no session's).
	Session string
	Turn    int

	plan bool // the plan's own request i (planSource)
}

// A Source says what measured request i is. Run calls Request once per
// index, in index order, on the goroutine that called Run, immediately
// before the request is sent (after it is due and a slot is free), so a
// source may depend on what earlier requests answered (Answerer). ctx
// ends when dispatch does (the run is cancelled, stopped or over): a
// source that reads or waits gives up then. An error stops dispatch: the
// requests sent are reported and Run returns the error.
type Source interface {
	Request(ctx context.Context, i int) (Request, error)
}

// SourceFunc adapts a function to a Source.
type SourceFunc func(ctx context.Context, i int) (Request, error)

// Request implements Source.
func (f SourceFunc) Request(ctx context.Context, i int) (Request, error) { return f(ctx, i) }

// An Answerer is a Source that learns what each measured request answered,
// as a multi-turn session must to send the actual answer in its next turn.
// Run calls Answer once for every measured request that was sent, on the
// request's goroutine once it ended and before it counts as ended for the
// Schedule (so a request due after it sees the answer). ctx is the run's.
// Calls of Answer and Request never overlap.
type Answerer interface {
	Source
	Answer(ctx context.Context, i int, a Answer)
}

// Answer is what a measured request answered, as Run tells an Answerer.
type Answer struct {
	// Content is the visible content the capture kept: the first 8192
	// characters (code points) of the answer (capacity/PROTOCOL.md#stream).
	Content string
	// Truncated says the answer was longer and Content holds its start.
	Truncated bool
	// OK says the request succeeded; a failed request's Content is what
	// arrived before it failed.
	OK bool
}

// A SizedSource is a Source that writes its own prompts
// (Request.Messages) and can size them to the server's counts. With
// PromptSizing "exact", Run calls SizedBy once, before the warm-up, with
// a Sizer that counts text as the server does (from its tokenizer
// endpoint, or from calibration requests), and sends the requests of the
// Source SizedBy returns (capacity/PROTOCOL.md#exact-sizing-traffic).
// Other Sources are refused with exact sizing.
type SizedSource interface {
	Source
	SizedBy(ctx context.Context, s Sizer) (Source, error)
}

// A Sizer is how the server counts prompt text, as exact sizing learned
// it before the warm-up: the fixed tokens of its chat template, and the
// tokens of the texts a SizedSource writes. Its methods send requests to
// the server (never measured, and never warming a cache a measured request
// would find, as long as the texts a TextKind writes share no prefix with
// a measured prompt); they are safe for concurrent use.
type Sizer interface {
	// Exact reports whether the Counters count each text with the
	// server's tokenizer endpoint, one request a text, exactly; false:
	// they read the curve that calibration requests drew of their kind of
	// text, costing nothing per text, within about 0.2 % where the kind's
	// sizes were calibrated.
	Exact() bool
	// Window is the window the server serves, in tokens: a request
	// planned at or above it is refused before its body is built
	// (error_type over_window), so a source need not size it.
	Window() int
	// Template returns the tokens the server counts in a chat request
	// beyond the contents of its messages (the chat template's role
	// markers and generation prompt, a BOS token) for one user message
	// after exchanges earlier (user, assistant) pairs: what a request
	// counts for its messages' texts is Template(exchanges) plus their
	// Counts.
	Template(ctx context.Context, exchanges int) (int, error)
	// Counter returns the Counter of texts of kind.
	Counter(ctx context.Context, kind TextKind) (Counter, error)
	// Count returns the server's count of one text as a message's
	// content: one count of the tokenizer endpoint, or without one a
	// calibration request of the text, less the template. No measured
	// prompt may start with the text.
	Count(ctx context.Context, text string) (int, error)
}

// A TextKind is a kind of text a SizedSource writes (its blocks, its
// requests' own text), for calibration to learn how the server counts
// it when there is no tokenizer endpoint.
type TextKind struct {
	// Name names the kind in errors ("block text").
	Name string
	// Write appends a text of the kind, n characters long, to dst.
	// Calibration sends such texts as one user message each: no measured
	// prompt may start with them.
	Write func(dst []byte, n int) []byte
	// Tokens are the counts, in tokens, the source needs texts of the kind
	// at: calibration measures the smallest, the median and the largest.
	Tokens []int
}

// A Counter counts a text's tokens as the content of a chat message (the
// chat template's are Sizer.Template's). It is safe for concurrent use.
type Counter interface {
	Count(ctx context.Context, text string) (int, error)
}

// Due says when a measured request is due. The zero value is DueNow.
type Due struct {
	kind   dueKind
	offset time.Duration
	after  int
}

type dueKind uint8

const (
	dueNow   dueKind = iota // as soon as a slot is free
	dueAt                   // offset from the start of the measured phase
	dueAfter                // offset after request after ended
)

// DueNow is due as soon as one of Workload.Concurrency slots is free: the
// closed loop. The request has no scheduled time; its latencies start when
// it is sent.
func DueNow() Due { return Due{} }

// DueAt is due offset after the start of the measured phase: an arrival
// process's offset or a trace's recorded timestamp. A request sent later
// (a full cap, an earlier request still waiting) has the wait as its
// queue time, charged to its scheduled-clock latencies.
func DueAt(offset time.Duration) Due { return Due{kind: dueAt, offset: max(offset, 0)} }

// DueAfter is due think after measured request j ended (its stream closed
// or failed): a session's next turn. j must be an earlier index.
func DueAfter(j int, think time.Duration) Due {
	return Due{kind: dueAfter, offset: max(think, 0), after: j}
}

// A Schedule says when measured request i is due. Run calls Due once per
// index, in index order, on the goroutine that called Run. Requests leave
// in index order (FIFO): one that waits, for its due time or for a slot,
// holds back the ones after it. A schedule may block until it knows (a
// session's next turn waits for a turn in flight); ctx ends when dispatch
// does, and a Due that returns then is not sent.
type Schedule interface {
	Due(ctx context.Context, i int) Due
}

// ScheduleFunc adapts a function to a Schedule.
type ScheduleFunc func(ctx context.Context, i int) Due

// Due implements Schedule.
func (f ScheduleFunc) Due(ctx context.Context, i int) Due { return f(ctx, i) }

// closedLoop is the Schedule of the closed loop: every request DueNow.
func closedLoop() Schedule {
	return ScheduleFunc(func(context.Context, int) Due { return DueNow() })
}

// offsetSchedule is the Schedule of due offsets from the start of the measured
// phase (an arrival schedule, a trace's timestamps); an index past the end
// is due at the last offset.
func offsetSchedule(offsets []time.Duration) Schedule {
	return ScheduleFunc(func(_ context.Context, i int) Due {
		if len(offsets) == 0 {
			return DueNow()
		}
		return DueAt(offsets[min(i, len(offsets)-1)])
	})
}

// An Observer is told when the measured phase starts and ends: the live
// progress line, a server-metrics sampler, a client self-audit. Start is
// called on the goroutine that called Run, after the warm-up and the
// connection warm-up, immediately before the first measured request; at
// is the phase's start, whose monotonic reading every anvil_go offset is
// taken from and whose wall-clock reading is started_at_unix_ns. ctx ends
// when Run returns. The func Start returns (nil for none) is called on the
// same goroutine once the report is assembled, with the report, which it
// may extend (a member of rep.AnvilGo); it is called for every run that
// reached the measured phase, cancelled or stopped ones included. No
// Observer call ever runs on a request's goroutine, so an observer never
// delays a request's clock.
//
// An Observer may also be a Finisher, told when the measured phase ends,
// and a Gate, asked before each measured request leaves.
type Observer interface {
	Start(ctx context.Context, at time.Time) (end func(rep *artifact.Report))
}

// ObserverFunc adapts a function to an Observer.
type ObserverFunc func(ctx context.Context, at time.Time) func(rep *artifact.Report)

// Start implements Observer.
func (f ObserverFunc) Start(ctx context.Context, at time.Time) func(rep *artifact.Report) {
	return f(ctx, at)
}

// A Finisher is an Observer that is also told when the measured phase
// ends (an optional interface, as io.WriterTo is to io.Writer): Run calls
// Finish on the goroutine that called Run, once every measured request has
// ended and before the report is assembled; the end func Start returned
// follows later. It is the moment for end readings that must not include
// the assembly, such as the built-in server-metrics sampler's last sample
// and the self-audit's end readings (capacity/PROTOCOL.md#server_metrics,
// #audit). Run calls the built-in observers' Finish first, then those of
// Workload.Observers in order; it is called whenever Start was, even when
// no report follows.
type Finisher interface {
	Observer
	Finish()
}

// A Gate is an Observer that also decides whether each measured request
// may leave: Run calls Admit(i) on the goroutine that called Run
// immediately before sending request i, once it is due and a slot is
// free. false ends dispatch as the end of a Duration campaign does: the
// requests not sent are not part of the run. Package anviltest's gate
// calls testing.B.Loop, so one benchmark iteration is one request.
type Gate interface {
	Observer
	Admit(i int) bool
}

// validateSeams checks the seam fields of a Workload against the others.
func (w Workload) validateSeams(v *validator) {
	if w.Schedule != nil && w.Rate > 0 {
		v.add("Workload.Schedule", "set", "must be nil with Rate > 0 (Rate is the arrival schedule)")
	}
	if _, sized := w.Source.(SizedSource); w.Source != nil && !sized && w.PromptSizing == promptSizingExact {
		v.add("Workload.Source", "set", "must be nil or a SizedSource with PromptSizing %q (exact sizing sizes the synthetic plan's prompts)", promptSizingExact)
	}
}

// seamsOf resolves the seams of a run: w's Source and Schedule, or the
// synthetic plan's requests and the closed loop or the arrival schedule
// (offsets, nil for a closed loop).
func seamsOf(w Workload, p *plan, offsets []time.Duration) seams {
	s := seams{source: planSource{p}, schedule: closedLoop()}
	switch {
	case w.Schedule != nil:
		s.schedule = w.Schedule
	case offsets != nil:
		s.schedule = offsetSchedule(offsets)
	}
	if w.Source != nil {
		s.source = w.Source
		if p.source != nil {
			s.source = p.source // sized by exact sizing
		}
		s.answerer, _ = s.source.(Answerer)
		// The planned contexts are the source's, known as it is asked.
		clear(p.Contexts)
	}
	for _, o := range w.Observers {
		if g, ok := o.(Gate); ok {
			s.gates = append(s.gates, g)
		}
	}
	return s
}

// startObservers starts every observer at the start of the measured phase
// and returns the end hooks they gave, in order.
func startObservers(ctx context.Context, at time.Time, obs []Observer) []func(*artifact.Report) {
	var ends []func(*artifact.Report)
	for _, o := range obs {
		if o == nil {
			continue
		}
		if end := o.Start(ctx, at); end != nil {
			ends = append(ends, end)
		}
	}
	return ends
}

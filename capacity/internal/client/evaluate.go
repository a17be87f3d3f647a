package client

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// MinPromptTokenFraction is the floor of a response's usage.prompt_tokens as
// a fraction of its request's planned context (planned_context_tokens, the
// context the prompt was built for after clamping to the prompt budget).
// A response at or below it fails with stream_validation_failed
// (prompt_truncated): the server truncated or dropped part of the prompt,
// so its timings measure a shorter prompt than the plan and are never
// latency samples. (At exactly half: ollama keeps exactly its 4,096-token
// window of a longer prompt, which is half of a planned 8,192.)
//
// Real tokenizers count the code-like filler within well under a factor of
// two of the promptCharsPerToken estimate (the seed's model counted 62,327
// prompt tokens for a 65,536-token plan, 0.95 of it, and chat-template
// tokens only add), while a silent truncation to a server's window falls far
// below: ollama 0.17.4 reported 4,096 prompt tokens for a 57,380-character
// prompt planned at 19,126 tokens (0.21). The check is fail-closed: it
// applies whenever usage reports prompt_tokens, including a server that
// reports 0.
const MinPromptTokenFraction = 0.5

// finishLength is the finish_reason of a response cut at max_tokens.
const finishLength = "length"

// The finish_reason values with which a server says it did not complete
// the request (capacity/PROTOCOL.md#failure-classes): vLLM ends an aborted
// request with "abort", SGLang a failed one with "error" (or "abort").
// A response ending with either is a failure (error_type aborted), never
// a latency sample, whatever content came before and even with [DONE].
const (
	finishAbort = "abort"
	finishError = "error"
)

// isFailingFinish reports whether a finish_reason is finishAbort or
// finishError.
func isFailingFinish(reason []byte) bool {
	return string(reason) == finishAbort || string(reason) == finishError
}

// Checks are the response contracts of a run, applied to every response
// that streamed visible content (capacity/PROTOCOL.md#timings).
type Checks struct {
	// Canaries checks the request canary of every measured response (its
	// marker is CanaryMarker(Seed, index)).
	Canaries bool
	Seed     int64
	// Words, when > 0, checks that every measured response is exactly
	// Words words ControlledOutputWord, under Policy ("observe" records,
	// PolicyStrict fails).
	Words  int
	Policy string
	// MaxTokens is the max_tokens sent (an Exchange's own when set), the
	// bound of usage.completion_tokens (checkUsage); it applies to warm-up
	// responses too.
	MaxTokens int
	// Window is the context window the truncation checks use
	// (Discovery.TruncationWindow), the ceiling of usage.prompt_tokens
	// (checkPromptTokens), and WindowFrom where it came from.
	Window     int
	WindowFrom WindowOrigin
}

// Evaluate turns ex, a request Send has sent, into its timing row (a
// success) or its failure row, following capacity/PROTOCOL.md#timings:
// timing fields from the monotonic stamps, validity, visible content, the
// usage check, the prompt-token floor (with ex.Planned > 0), the request
// canary and the controlled-output contract. An unmeasured request
// (ex.Unmeasured, a warm-up) is checked for usage, timing and visible
// content only: its prompt carries no canary or word count.
func (c *Client) Evaluate(ex *Exchange) (*artifact.TimingRow, *artifact.Failure) {
	k := c.checks
	if ex.MaxTokens > 0 {
		k.MaxTokens = ex.MaxTokens
	}
	promptFloor := ex.Planned > 0
	if ex.Unmeasured {
		k = Checks{MaxTokens: k.MaxTokens, Window: k.Window, WindowFrom: k.WindowFrom}
		promptFloor = false
	}
	if generatesNothing(c.dialect) {
		return c.evaluateUntimed(k, promptFloor, ex)
	}
	return k.evaluate(ex.Index, ex.Planned, promptFloor, ex)
}

// evaluate is Evaluate under the checks k.
func (k Checks) evaluate(index, planned int, promptFloor bool, ex *Exchange) (*artifact.TimingRow, *artifact.Failure) {
	var row *artifact.TimingRow
	s := &ex.stream
	if ex.class == "" && s.contentChunks == 0 {
		if s.reasoningChunks > 0 && slices.Contains(s.finishReasons, finishLength) {
			ex.fail(artifact.FailureStreamValidation, ErrorTypeNoVisibleContent, "stream completed without visible content: reasoning used the whole max_tokens budget (%d tokens; finish_reason %q after %d reasoning chunks): raise Workload.MaxTokens or disable thinking (Workload.ThinkingMode)",
				k.MaxTokens, finishLength, s.reasoningChunks)
		} else {
			ex.fail(artifact.FailureStreamValidation, ErrorTypeNoVisibleContent, "stream completed without visible content (%d reasoning chunks, %d events, [DONE] %t)",
				s.reasoningChunks, s.events, s.terminal)
		}
	}
	// Usage is checked (and refused counts cleared) before anything is
	// derived from it, whatever else failed.
	if problem := checkUsage(&s.usage, k.MaxTokens, s.contentChunks, ex.secrets.Scrub); problem != "" {
		ex.fail(artifact.FailureStreamValidation, ErrorTypeInvalidUsage, "%s", problem)
	}
	if !s.firstContent.IsZero() {
		row = rowFromExchange(index, planned, ex)
		if ex.class == "" && !(row.TimeToFirstOutputMS >= 0 && row.TimeToFirstOutputMS <= row.TTFTMS && row.TTFTMS <= row.E2EMS) {
			ex.fail(artifact.FailureStreamValidation, ErrorTypeInvalidTiming, "invalid timing: want 0 <= time_to_first_output_ms (%v) <= ttft_ms (%v) <= e2e_ms (%v)",
				row.TimeToFirstOutputMS, row.TTFTMS, row.E2EMS)
		}
	}
	if ex.class == "" && row != nil {
		// The artifact's own row check, so that no response can make the
		// report fail to recompute.
		if err := row.Check(); err != nil {
			ex.fail(artifact.FailureStreamValidation, ErrorTypeInvalidTiming, "invalid timing row: %v", err)
		}
	}
	if ex.class == "" && row != nil && promptFloor {
		checkPromptTokens(ex, planned, k.Window, k.WindowFrom)
	}
	if ex.class == "" && row != nil {
		k.contracts(index, ex, row)
	}
	if ex.class == "" {
		return row, nil
	}
	return nil, failureFromExchange(index, planned, ex, row)
}

// checkPromptTokens fails the exchange as a truncated prompt when usage
// shows the server did not process the prompt that was planned: prompt
// tokens at or below MinPromptTokenFraction of the planned context (the
// server dropped part of it), at or above the truncation window (a server
// that keeps exactly its window of a longer prompt, as ollama does,
// reports the window itself), or prompt plus completion tokens beyond it
// (no server serving that window can have produced them). A count of
// exactly the plan is the whole prompt, however large: no window cut it
// (the server serves a larger window than known). Each
// message names where the window came from (from); a window only declared
// (Target.MaxModelLen) may be smaller than the one the server serves, so
// its messages do not claim a cut. window 0 skips the window rules.
func checkPromptTokens(ex *Exchange, planned, window int, from WindowOrigin) {
	u := ex.stream.usage
	if !u.Prompt.ok {
		return
	}
	p := u.Prompt.v
	floor := MinPromptTokenFraction * float64(planned)
	if p == int64(planned) {
		window = 0 // counted as planned: no window cut it
	}
	switch {
	case float64(p) <= floor:
		ex.fail(artifact.FailureStreamValidation, ErrorTypePromptTruncated, "prompt truncated: usage.prompt_tokens %d is at or below the floor of %g tokens (%g of the planned context of %d tokens): the server dropped part of the prompt",
			p, floor, MinPromptTokenFraction, planned)
	case window > 0 && p >= int64(window) && from.Declared:
		ex.fail(artifact.FailureStreamValidation, ErrorTypePromptTruncated, "prompt truncated: usage.prompt_tokens %d is at or above the context window of %d tokens %s for a planned context of %d tokens: the server cut the prompt to a window of that size, or it serves a larger window than declared and counted the prompt above it (then raise Target.MaxModelLen to its window)",
			p, window, from, planned)
	case window > 0 && p >= int64(window):
		ex.fail(artifact.FailureStreamValidation, ErrorTypePromptTruncated, "prompt truncated: usage.prompt_tokens %d is at or above the context window of %d tokens %s for a planned context of %d tokens: the server cut the prompt to its window",
			p, window, from, planned)
	case window > 0 && u.Completion.ok && p+u.Completion.v > int64(window) && from.Declared:
		ex.fail(artifact.FailureStreamValidation, ErrorTypePromptTruncated, "prompt truncated: usage.prompt_tokens %d + completion_tokens %d exceed the context window of %d tokens %s: the server does not serve that window (it cut the prompt, or Target.MaxModelLen is not its window)",
			p, u.Completion.v, window, from)
	case window > 0 && u.Completion.ok && p+u.Completion.v > int64(window):
		ex.fail(artifact.FailureStreamValidation, ErrorTypePromptTruncated, "prompt truncated: usage.prompt_tokens %d + completion_tokens %d exceed the context window of %d tokens %s: the server cut the prompt to fit its window",
			p, u.Completion.v, window, from)
	}
}

// WindowOrigin says where the truncation window came from, as the
// truncation messages name it: the server advertises (/api/ps)", "declared
// (Target.MaxModelLen)".
type WindowOrigin struct {
	// Source is the endpoint that advertised the window, "" for a
	// declared one.
	Source string
	// Declared: the window is Target.MaxModelLen, no endpoint advertising
	// the window served.
	Declared bool
	// Trained: the endpoint gives the model's trained maximum (Ollama's
	// /api/show), which the served window may be below.
	Trained bool
}

// String is the origin as it follows "the context window of N tokens":
// "the server advertises (/api/ps)", "declared (Target.MaxModelLen)".
func (o WindowOrigin) String() string {
	switch {
	case o.Declared || o.Source == "":
		return "declared (Target.MaxModelLen)"
	case o.Trained:
		return "the server advertises as the model's trained maximum (" + o.Source + ")"
	}
	return "the server advertises (" + o.Source + ")"
}

// contracts applies the request canary and the controlled-output checks
// to a valid row, recording them in the row and failing the exchange when
// a contract is broken.
func (k Checks) contracts(index int, ex *Exchange, row *artifact.TimingRow) {
	visible, complete := ex.stream.capture.String(), !ex.stream.capture.Truncated()
	marker := ""
	if k.Canaries {
		marker = CanaryMarker(k.Seed, index)
		c := checkCanary(marker, visible, complete)
		row.RequestCanary = c
		if !c.Passed {
			ex.fail(artifact.FailureRequestCanary, ErrorTypeCanary, "request canary %s failed: %s", marker, canaryProblem(c))
		}
	}
	if k.Words > 0 {
		c := checkControlledOutput(visible, complete, k.Words, k.Policy, marker)
		row.ControlledOutput = c
		if !c.Passed && ex.class == "" {
			ex.fail(artifact.FailureControlledOutput, ErrorTypeControlledOutput, "controlled output under policy %s: want exactly %d words %q, observed %d and %d other words (capture complete %t)",
				k.Policy, k.Words, ControlledOutputWord, c.ObservedCodeWords, c.ObservedExtraWords, c.CaptureComplete)
		}
	}
}

// canaryProblem names every reason a canary check failed.
func canaryProblem(c *artifact.CanaryCheck) string {
	var p []string
	switch {
	case c.ObservedMarkerCount == 0:
		p = append(p, "marker missing")
	case !c.MarkerAtStart:
		p = append(p, "marker not at the start")
	}
	if c.ForeignMarkerCount > 0 {
		p = append(p, fmt.Sprintf("%d peer marker(s)", c.ForeignMarkerCount))
	}
	if !c.CaptureComplete {
		p = append(p, fmt.Sprintf("capture truncated at %d characters", VisibleCaptureLimit))
	}
	return strings.Join(p, ", ")
}

// MS converts a monotonic duration to milliseconds.
func MS(d time.Duration) float64 { return float64(d) / 1e6 }

// timingRow derives the row of capacity/PROTOCOL.md#timings from an exchange that saw
// visible content. Derived fields use the reference's arithmetic on the
// millisecond values, so every row is self-consistent.
func rowFromExchange(index, planned int, ex *Exchange) *artifact.TimingRow {
	s := &ex.stream
	r := &artifact.TimingRow{
		RequestIndex:            index,
		PlannedContextTokens:    planned,
		ContentChunks:           s.contentChunks,
		ReasoningChunks:         s.reasoningChunks,
		TimeToFirstOutputMS:     MS(s.firstOutput.Sub(ex.start)),
		TTFTMS:                  MS(s.firstContent.Sub(ex.start)),
		E2EMS:                   MS(ex.endAt.Sub(ex.start)),
		VisibleContentTruncated: s.capture.Truncated(),
	}
	r.GenerationMS = r.E2EMS - r.TimeToFirstOutputMS
	r.VisibleGenerationMS = r.E2EMS - r.TTFTMS
	if s.usage.Prompt.ok {
		p := int(s.usage.Prompt.v)
		r.PromptTokens = &p
		if r.TimeToFirstOutputMS > 0 {
			v := float64(p) / (r.TimeToFirstOutputMS / 1000)
			r.EffectivePrefillTokS = &v
		}
	}
	if s.usage.Completion.ok {
		r.OutputTokenSource = artifact.SourceUsage
		out := int(s.usage.Completion.v)
		r.OutputTokens = &out
		if decode := out - 1; decode > 0 && r.GenerationMS > 0 {
			rate := float64(decode) / (r.GenerationMS / 1000)
			tpot := r.GenerationMS / float64(decode)
			mtpot, itl := tpot, tpot
			r.DecodeTokS, r.TPOTMS, r.MeanTimePerOutputTokenMS, r.MeanInterTokenLatencyMS = &rate, &tpot, &mtpot, &itl
		}
	} else {
		r.OutputTokenSource = artifact.SourceContentChunks
	}
	return r
}

// failureRow builds the "failures" entry of a request.
func failureFromExchange(index, planned int, ex *Exchange, row *artifact.TimingRow) *artifact.Failure {
	f := &artifact.Failure{
		RequestIndex:         index,
		PlannedContextTokens: planned,
		FailureClass:         ex.class,
		ErrorType:            ex.errType,
		ResponseReceived:     ex.received,
		ElapsedMS:            exchangeElapsedMS(ex),
	}
	f.SetErrorMessage(ex.message)
	if ex.status != 0 {
		st := ex.status
		f.HTTPStatus = &st
	}
	if !ex.received {
		return f
	}
	// The checks travel in the timing row; Failure.RequestCanary and
	// Failure.ControlledOutput stay nil rather than repeat them.
	f.ResponseTiming = row
	s := &ex.stream
	md := &artifact.ResponseMetadata{
		OutputTokenSource:       artifact.SourceContentChunks,
		ContentChunks:           s.contentChunks,
		ReasoningChunks:         s.reasoningChunks,
		FinishReasons:           make([]string, 0, len(s.finishReasons)),
		StreamTerminalObserved:  s.terminal,
		VisibleContentTruncated: s.capture.Truncated(),
	}
	for _, fr := range s.finishReasons {
		// Server text: scrubbed whole, then bounded.
		fr, cut := cutRunes(ex.secrets.Scrub(fr), maxFinishReasonRunes)
		if cut {
			fr += "..."
		}
		md.FinishReasons = append(md.FinishReasons, fr)
	}
	if s.usage.Completion.ok {
		md.OutputTokenSource = artifact.SourceUsage
	}
	if s.usage.Present {
		md.Usage = &artifact.Usage{PromptTokens: wireIntPtr(s.usage.Prompt), CompletionTokens: wireIntPtr(s.usage.Completion), TotalTokens: wireIntPtr(s.usage.Total)}
	}
	f.ResponseMetadata = md
	return f
}

// elapsedMS is the time from t0 to the end of the request (0 when it was
// never issued).
func exchangeElapsedMS(ex *Exchange) float64 {
	if ex.start.IsZero() || ex.endAt.IsZero() {
		return 0
	}
	return MS(ex.endAt.Sub(ex.start))
}

// maxFinishReasonRunes bounds each finish reason of a failure's metadata
// (real ones are words such as "stop" and "length").
const maxFinishReasonRunes = 64

// cutRunes cuts s to at most n code points.
func cutRunes(s string, n int) (string, bool) {
	i := 0
	for j := range s {
		if i == n {
			return s[:j], true
		}
		i++
	}
	return s, false
}

func wireIntPtr(n Count) *int {
	if !n.ok {
		return nil
	}
	v := int(n.v)
	return &v
}

// evaluateUntimed is Evaluate for an answer that does not stream and
// generates no token (embeddings): its row has the latency and the input
// tokens, no token times (artifact.TimingRow.OmitTokenTimes); its vectors
// must be one per input, each of the run's length (that of its first
// valid answer); usage and the prompt-token floor are checked as for
// every API.
func (c *Client) evaluateUntimed(k Checks, promptFloor bool, ex *Exchange) (*artifact.TimingRow, *artifact.Failure) {
	s := &ex.stream
	inputs := max(ex.Inputs, 1)
	if ex.class == "" && s.vectors != inputs {
		ex.fail(artifact.FailureEmbeddingsInvalid, ErrorTypeVectorCount, "embeddings answer: %d vectors for %d inputs", s.vectors, inputs)
	}
	if ex.class == "" {
		d := int64(s.dimension)
		if !c.dimension.CompareAndSwap(0, d) && c.dimension.Load() != d {
			ex.fail(artifact.FailureEmbeddingsInvalid, ErrorTypeVectorDimension, "embeddings answer: vectors of %d values, where the run's first answer had %d",
				d, c.dimension.Load())
		}
	}
	if problem := checkUsage(&s.usage, k.MaxTokens, 0, ex.secrets.Scrub); problem != "" {
		ex.fail(artifact.FailureStreamValidation, ErrorTypeInvalidUsage, "%s", problem)
	}
	var row *artifact.TimingRow
	if s.terminal {
		row = &artifact.TimingRow{RequestIndex: ex.Index, PlannedContextTokens: ex.Planned,
			E2EMS: MS(ex.endAt.Sub(ex.start)), OutputTokenSource: artifact.SourceUsage}
		row.OmitTokenTimes()
		if s.usage.Prompt.ok {
			p := int(s.usage.Prompt.v)
			row.PromptTokens = &p
		}
		if ex.class == "" {
			if err := row.Check(); err != nil {
				ex.fail(artifact.FailureStreamValidation, ErrorTypeInvalidTiming, "invalid timing row: %v", err)
			}
		}
		if ex.class == "" && promptFloor {
			checkPromptTokens(ex, ex.Planned, k.Window, k.WindowFrom)
		}
	}
	if ex.class == "" && row != nil {
		return row, nil
	}
	return nil, failureFromExchange(ex.Index, ex.Planned, ex, row)
}

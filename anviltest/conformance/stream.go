package conformance

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/sse"
)

// sseDone is the data of the terminal event of an OpenAI stream.
const sseDone = "[DONE]"

// eventStreamType is the media type of a Server-Sent Events body.
const eventStreamType = "text/event-stream"

// streamSeen is everything one streamed answer showed, in any API.
type streamSeen struct {
	decode          func(s *streamSeen, name string, data []byte) // the API's (wire.decode)
	status          int
	contentType     string
	contentEncoding string
	body            []byte              // the start of a non-200 answer
	scrub           func(string) string // the prober's, for excerpts
	elapsed         time.Duration
	readErr         error // the body ended abnormally (drop, timeout, bounds)

	events     int      // data events, the terminal one included
	names      []string // distinct event types
	done       bool     // the API's terminal event arrived ([DONE], message_stop, ...)
	doneMarker bool     // that event was data: [DONE], not JSON
	afterDone  int      // data events after it
	badJSON    []string // data that was not JSON
	errObjects []string // in-stream errors ({"error": ...}, error events, response.failed)
	objects    []string // distinct "object" values (Responses: event types)
	mismatched []string // named events whose data says another type

	content, reasoning capturedText // bounded by maxCapture
	contentChunks      int          // chunks with non-empty delta.content
	reasoningChunks    int          // chunks with non-empty reasoning text
	reasoningField     string       // the delta field reasoning came in
	finishes           []string     // every stop reason, in order
	stopReason         *string      // the answer's stop reason (chat: the last chunk with choices' finish_reason)
	choiceChunks       int
	usage              *usageSeen // the last usage object (Messages: the counts so far)
	usageObjects       int
	usageWithChoices   bool   // the last usage object came with choices
	usageRaw           string // Messages: every usage object, in order
	// whole: an answer read whole (embeddings), not a stream; vectors
	// are its items.
	whole   bool
	vectors []embeddingSeen
	// startInput and deltaInput are the input_tokens of a Messages
	// answer's message_start and message_delta (nil when absent).
	startInput, deltaInput *int
}

// usageSeen is a usage object's token counts (nil: absent or not an
// integer).
type usageSeen struct {
	prompt, completion, total, cached *int
	hasDetails                        bool
	raw                               string
	// reasoning is Responses' output_tokens_details.reasoning_tokens;
	// input and cacheCreate Messages' input_tokens and
	// cache_creation_input_tokens.
	reasoning, input, cacheCreate *int
}

// wireChunk is the part of a chat.completion.chunk the checks read.
type wireChunk struct {
	Object  string          `json:"object"`
	Choices []wireChoice    `json:"choices"`
	Usage   json.RawMessage `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type wireChoice struct {
	Delta struct {
		Content          *string `json:"content"`
		ReasoningContent *string `json:"reasoning_content"`
		Reasoning        *string `json:"reasoning"`
	} `json:"delta"`
	Text         *string `json:"text"` // completions
	FinishReason *string `json:"finish_reason"`
}

// parseUsage reads a usage object; integers only (a count of 3.0 or "3" is
// reported as absent).
func parseUsage(raw json.RawMessage) *usageSeen {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var u struct {
		Prompt     json.RawMessage `json:"prompt_tokens"`
		Completion json.RawMessage `json:"completion_tokens"`
		Total      json.RawMessage `json:"total_tokens"`
		Details    *struct {
			Cached json.RawMessage `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	}
	if json.Unmarshal(raw, &u) != nil {
		return &usageSeen{raw: string(raw)}
	}
	s := &usageSeen{prompt: jsonInt(u.Prompt), completion: jsonInt(u.Completion), total: jsonInt(u.Total), raw: string(raw)}
	if u.Details != nil {
		s.hasDetails = true
		s.cached = jsonInt(u.Details.Cached)
	}
	return s
}

func jsonInt(raw json.RawMessage) *int {
	n, err := strconv.Atoi(string(raw))
	if err != nil {
		return nil
	}
	return &n
}

// fmtInt prints a count that may be absent.
func fmtInt(n *int) string {
	if n == nil {
		return "absent"
	}
	return strconv.Itoa(*n)
}

// stream sends one request of the API and reads its stream whatever the
// Content-Type says (a mislabelled stream is still read, so that only
// nameStreamFraming fails for the label). A gzip body is decoded. The
// error is for a request that got no answer at all.
func (p *prober) stream(ctx context.Context, body []byte, hdr http.Header) (*streamSeen, error) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	u := p.base + p.w.path
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(string(body)))
	if err != nil {
		return nil, err
	}
	p.setHeaders(req, hdr)
	p.w.header(req.Header, p.apiKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", eventStreamType)
	start := time.Now()
	resp, err := p.hc.Do(req)
	if err != nil {
		return nil, p.requestError(http.MethodPost, u, err, p.timeout)
	}
	defer resp.Body.Close()
	s := &streamSeen{decode: p.w.decode, scrub: p.scrub, status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"),
		contentEncoding: resp.Header.Get("Content-Encoding")}
	if resp.StatusCode != http.StatusOK {
		s.body, _ = io.ReadAll(io.LimitReader(resp.Body, maxBodyExcerpt))
		s.elapsed = time.Since(start)
		return s, nil
	}
	var r io.Reader = resp.Body
	if !resp.Uncompressed && strings.EqualFold(s.contentEncoding, "gzip") {
		gz, err := gzip.NewReader(resp.Body)
		if err != nil {
			s.readErr = fmt.Errorf("gzip body: %w", err)
			return s, nil
		}
		r = gz
	}
	s.read(sse.NewReader(r, capacity.MaxEventSize))
	if s.readErr != nil {
		s.readErr = p.requestError(http.MethodPost, u, s.readErr, p.timeout)
	}
	s.elapsed = time.Since(start)
	return s, nil
}

// read consumes the events until the end of the body, at most maxEvents.
func (s *streamSeen) read(r *sse.Reader) {
	for r.Scan() {
		if s.events >= maxEvents {
			s.readErr = fmt.Errorf("more than %d events: more than any request of the suite asks for", maxEvents)
			return
		}
		s.event(r.Event())
	}
	if err := r.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("an event larger than capacity.MaxEventSize (%d bytes)", capacity.MaxEventSize)
		}
		s.readErr = err
	}
}

// maxEvents bounds the events of one response the checks read: every
// request of the suite asks for at most answerBudget tokens.
const maxEvents = 8 * answerBudget

func (s *streamSeen) event(ev sse.Event) {
	s.events++
	if len(ev.Type) > 0 && !contains(s.names, string(ev.Type)) {
		s.names = append(s.names, string(ev.Type))
	}
	if s.done {
		s.afterDone++
		return
	}
	decode := s.decode
	if decode == nil {
		decode = decodeChat
	}
	decode(s, string(ev.Type), ev.Data)
}

// jsonEvents is the JSON data events, as stream_framing counts them:
// data: [DONE] apart.
func (s *streamSeen) jsonEvents() int {
	if s.doneMarker {
		return s.events - 1
	}
	return s.events
}

// capturedText is the text of one kind (content or reasoning) a stream
// carried, its first maxCapture bytes.
type capturedText struct {
	b   strings.Builder
	cut bool // text beyond maxCapture was left out
}

// maxCredentialForm bounds the bytes of one form of a credential a server
// may echo (raw, JSON-escaped, encoded): what a cut capture may end inside.
const maxCredentialForm = 4 << 10

// add appends text up to maxCapture bytes in all.
func (c *capturedText) add(text string) {
	room := maxCapture - c.b.Len()
	if len(text) > room {
		text, c.cut = text[:max(room, 0)], true
	}
	c.b.WriteString(text)
}

// scrubbed is the text with the target's credentials removed (scrub) before
// any cut: when the capture was cut at maxCapture, a credential may have
// been cut with it, and its first part, which no scrub recognises, lies in
// the last maxCredentialForm bytes; they are dropped after the scrub.
func (c *capturedText) scrubbed(scrub func(string) string) string {
	s := c.b.String()
	if scrub != nil {
		s = scrub(s)
	}
	if c.cut {
		s, _ = cutRunes(s, max(len(s)-maxCredentialForm, 0))
	}
	return s
}

// cutRunes cuts s to at most n bytes on a rune boundary.
func cutRunes(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// outputChunks is the number of chunks that carried output text, a lower
// bound of the completion tokens (every such chunk carries at least one).
func (s *streamSeen) outputChunks() int { return s.contentChunks + s.reasoningChunks }

// failed says why the exchange gave no stream to judge ("" when it did).
func (s *streamSeen) failed() string {
	if s.status != http.StatusOK {
		return fmt.Sprintf("the streamed request was answered HTTP %d (Content-Type %q): %s", s.status, s.contentType, excerpt(s.scrub, s.body))
	}
	return ""
}

// mediaType is the media type of a Content-Type value, lowercased ("" when
// it does not parse).
func mediaType(ct string) string {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return ""
	}
	return mt
}

// summary is one note on what the stream (or the whole answer) showed.
func (s *streamSeen) summary() string {
	if s.whole {
		return s.embeddingsSummary()
	}
	finish := "none"
	if s.stopReason != nil {
		finish = strconv.Quote(*s.stopReason)
	}
	usage := "no usage"
	if s.usage != nil {
		usage = "usage " + excerpt(s.scrub, []byte(s.usage.raw))
	}
	return fmt.Sprintf("HTTP %d, Content-Type %q, %d JSON data events, terminal %t, %d content and %d reasoning chunks, stop reason %s, %s, %d ms",
		s.status, s.contentType, s.jsonEvents(), s.done, s.contentChunks, s.reasoningChunks, finish, usage, s.elapsed.Milliseconds())
}

// baseExchange is the stream several checks judge (stream_framing, usage,
// finish_reason, content, reasoning_separation): a short question, usage
// asked for, max_tokens answerBudget (at most half a known window),
// Accept-Encoding identity. It is sent
// once per run, by the first check that needs it.
func (p *prober) baseExchange(ctx context.Context) (*streamSeen, error) {
	var err error
	p.baseOnce.Do(func() {
		budget := answerBudget
		if win, _ := p.window(); win > 0 {
			budget = min(budget, win/2) // a small window still fits the question
		}
		p.baseQuestion = "In one short sentence: why is the sea salty? (conformance run " + p.nonce + ")"
		body := p.body(p.baseQuestion, budget, nil)
		if !p.w.streams() {
			body = p.body("", 0, map[string]any{"input": p.embeddingsInputs()})
		}
		p.baseSeen, err = p.exchange(ctx, body, http.Header{"Accept-Encoding": {"identity"}})
		if err != nil {
			p.baseSeen = &streamSeen{readErr: err}
		}
	})
	if p.baseSeen.status == 0 {
		return p.baseSeen, p.baseSeen.readErr
	}
	return p.baseSeen, nil
}

// answerBudget is the max_tokens of the requests whose visible content is
// judged: room for a reasoning model's thinking before a short answer.
const answerBudget = 1024
